//! The back-of-the-envelope derivations behind "size it up" (being built).
