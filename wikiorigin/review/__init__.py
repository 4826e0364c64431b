"""Human review of a built dataset: a local web page to accept, reject (with a reason) and edit
items one at a time beside the article they cite, with every decision kept in SQLite.

:mod:`.items` reads a dataset (mcq, the released YokaiEval rows, free-form, preferences) and
joins the articles; :mod:`.store` is the append-only decisions database; :mod:`.app` the web
app (Starlette, uvicorn); :mod:`.stats` counts and agreement; :mod:`.export` the accepted items
with edits applied. The command line: ``wikiorigin review serve|stats|export``.
"""

__all__: list[str] = []
