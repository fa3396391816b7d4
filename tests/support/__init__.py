"""What the tests share (imported as `support.…`: pytest puts tests/ on sys.path).

    jsonrpc       the one JSON-RPC codec: frames written (well formed or wrong on purpose) and read back
    positions     line and character of a needle in a text as the protocol counts them; offsets; edits applied
    wait          waits on events or short polls that fail naming what they waited for; "did not happen" shown
                  by a later positive event
    embeddings    a stub embeddings endpoint on 127.0.0.1
    checkout      a copy of this checkout as a new user would have it
    package_view  the installed package's layout for the static checks
"""
