"""The research surface: a proposition's supporting and refuting authority, with the evidence and the reasons.

`StanceIndex` (index.py) answers; records.py holds what it returns; render.py turns a brief into a terminal
table, Markdown or JSON; the web page is citator.server.ui.
"""
