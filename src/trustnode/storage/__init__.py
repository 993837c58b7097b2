"""Storage and privacy: IPFS blob stores, segment encryption, key envelopes, Merkle commitments, batching."""
