//! Percentiles and summaries of simulated measurements (being built).
