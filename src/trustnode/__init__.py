"""trustnode: decentralized auditing of LLM reasoning."""
