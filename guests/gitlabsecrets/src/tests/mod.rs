//! The behaviour of a pass, one file per part of "The reconciler", each test named after
//! the rule it checks; every pass runs against [`FakeCluster`](crate::testing::FakeCluster)
//! with the secretgen planner.

mod certificates;
mod freshness;
mod labels_and_events;
mod secrets;
mod status;
