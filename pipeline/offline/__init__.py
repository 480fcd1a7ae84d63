"""Parts of the offline extractor: text spans, patterns, noun phrases, cues, ranking."""
