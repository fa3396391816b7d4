"""Rendering: Markdown pages (and `llms.txt`) generated from the model through Jinja2 templates.

`templating` compiles and runs templates in a sandbox and owns the generated-region markers; `views` builds the
plain-data view model each template receives; `pages` puts the two together (which pages a template produces,
where they go, and how a page is merged into a file that already exists)."""
