"""AdaTest's debugging loop: fine-tune on failing tests, re-test every topic, round after round."""
