"""The analyzers' and the resolver's versions: what snapshots, input fingerprints, the facts cache and the
search index record. Kept apart from the analyzers so that a warm search can check them without importing
markdown-it or tree-sitter. Bump one whenever what it produces changes."""

MARKDOWN = "1.3.13"
TYPESCRIPT = "1.3.14"
MANIFESTS = "1.4.3"
RESOLVER = "1.5.13"

ANALYZERS = {"markdown": MARKDOWN, "typescript": TYPESCRIPT, "manifests": MANIFESTS}
