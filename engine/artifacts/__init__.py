"""What is written to `.docbridge/`: the snapshot file and the DocBridgeIndexV1 index file."""
