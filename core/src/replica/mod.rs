//! The replica simulator: a vLLM V1-style engine on one replica (being built).
