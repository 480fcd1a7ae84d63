"""Parts of the offline extractor: text spans, phrase patterns, keyphrases (no model download)."""
