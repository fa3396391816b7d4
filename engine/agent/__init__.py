"""For agents: handoffs, bounded payloads, the knowledge tools, doctor, and retrieval suites."""
