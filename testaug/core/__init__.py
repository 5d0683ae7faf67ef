"""The foundation every stage builds on: records, errors, file readers and writers, settings,
bundled data paths, run manifests, and the shared spaCy pipeline."""
