//! Workloads: arrival processes, length distributions, chat sessions, tenants (being built).
