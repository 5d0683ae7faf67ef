"""Test tooling shipped with testaug: a scripted OpenAI-compatible server."""
