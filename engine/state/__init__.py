"""State: the model of a repository at one revision, as an immutable value.

`model_state.ModelState` (facts, universe, resolution, and a memo of derived views), `scan` (the first
state), `transitions` (the next state after file changes), `text` (a file's text as the model knows it).
"""
