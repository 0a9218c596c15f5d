"""kneepoint.app: what users see: the web pages (web/), the command line (cli/), what they share (sharing/), and the
chart, query and wording modules these rooms have in common."""

if __name__ != "kneepoint.app":
    # The checkout's folder imported by its own name (the checkout on sys.path): every module would load twice.
    raise ImportError(f"import kneepoint.app, not {__name__}")
