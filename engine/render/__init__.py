"""Rendering: Markdown pages (and `llms.txt`) generated from the model through Jinja2 templates.

`templating` compiles and runs templates in a sandbox and owns the generated-region markers; `views` builds the
plain-data view model each template receives; `pages` puts the two together (which pages a template produces,
where they go, and how a page is merged into a file that already exists)."""

# kept here (no imports) so that building the command line's parser stays cheap
TEMPLATES = ("llms.txt", "area", "ownership", "change-digest", "overlay-review")
DEFAULT_OUTPUT = {"llms.txt": "llms.txt", "area": "docs/areas", "ownership": "docs/ownership",
                  "change-digest": "docs/change-digest.md", "overlay-review": "docs/overlay-review.md"}
