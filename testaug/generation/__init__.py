"""Generation: prompts from seed cases, LLM backends, the response cache, retries and rate
limits, and the parsing of replies into candidates."""
