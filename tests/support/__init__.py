"""What the tests share: a view of the installed package for the static checks, positions, one JSON-RPC codec."""
