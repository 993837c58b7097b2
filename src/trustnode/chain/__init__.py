"""Chain capability: contract build, artifacts, local devnet, and a typed web3 client."""
