//! Every file in `content/scenarios/` is shipped: registered as a built-in of its kind, with
//! the text on disk.

use std::path::Path;
use trainer_engine::scenario::fleet::BUILTIN as FLEET_BUILTIN;
use trainer_engine::scenario::{Scenario, REPLICA_BUILTIN};

#[test]
fn every_scenario_file_is_a_builtin_of_its_kind() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../content/scenarios");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("content/scenarios")
        .map(|e| e.expect("a directory entry"))
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().into_string().expect("a UTF-8 name"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenario files in {}", dir.display());
    for file in &files {
        let on_disk = std::fs::read_to_string(dir.join(file)).expect("a text file");
        let replica = REPLICA_BUILTIN.iter().find(|(f, _)| f == file);
        let fleet = FLEET_BUILTIN.iter().find(|(f, _)| f == file);
        let (text, is_fleet) = match (replica, fleet) {
            (Some((_, t)), None) => (*t, false),
            (None, Some((_, t))) => (*t, true),
            (None, None) => panic!(
                "{file} is in content/scenarios/ but in neither REPLICA_BUILTIN \
                 (engine/src/scenario/mod.rs) nor scenario::fleet::BUILTIN (engine/src/scenario/fleet.rs)"
            ),
            (Some(_), Some(_)) => panic!("{file} is registered as a replica and as a fleet"),
        };
        assert_eq!(text, on_disk, "{file}: the built-in text is not the file's");
        match Scenario::from_file_text(file, text) {
            Ok(Scenario::Fleet(_)) => assert!(is_fleet, "{file} parses as a fleet"),
            Ok(Scenario::Replica(_)) => assert!(!is_fleet, "{file} parses as a replica"),
            Err(e) => panic!("{file}: {e:?}"),
        }
    }
    for (file, _) in REPLICA_BUILTIN.iter().chain(FLEET_BUILTIN.iter()) {
        assert!(
            files.iter().any(|f| f == file),
            "{file} is registered but not in content/scenarios/"
        );
    }
}
