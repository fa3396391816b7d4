"""Editor features as functions of a model state: definition, hover, references, completion, code actions,
code lenses, document links and symbols, rename, and the provisional answers given while a first scan runs.

Everything here works in engine coordinates (repository-relative paths, 0-based lines, code-point columns)
and returns the plain values of `docbridge.engine.ide.types`; a language server only converts them to its protocol.
"""
