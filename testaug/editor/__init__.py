"""CheckList's editor: fill-in suggestions, WordNet relations and lexicon review."""
