"""The enrichment overlay: typed agent proposals, deterministic validators, the sealed overlay and approvals.

Layering: `proposals`, `overlay` and `validate` are pure and may be read by retrieval; `packs`, `agent` and
`run` talk to the external agent command and are imported only by `docbridge enrich` (a test walks the
imports of the search, query, render and language-server paths).
"""
