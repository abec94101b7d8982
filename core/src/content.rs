//! Lessons, build-up scripts and interview moments, parsed from `content/`.
