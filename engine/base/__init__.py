"""Base: what every layer above shares and nothing here depends on a layer above.

The model's values (`model`), configuration, hashing, safe reads of the repository and of our artifacts,
sealed caches, the memo key a view is kept under, finding codes and rules, the lexicon, the token budget,
and the accepted-enrichment overlay file.
"""
