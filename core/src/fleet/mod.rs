//! The fleet simulator: gateway, quota store, router, pools, relay, autoscaler (being built).
