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

/// A pool's number formats as a file writes them: `weight_dtype = "fp8"` alone is FP8 weights
/// and activations (what such files always meant), `activation_dtype = "bf16"` beside it is
/// weight-only FP8, and FP8 activations over BF16 weights are refused on their own field.
#[test]
fn a_pool_file_sets_each_precision_choice_apart() {
    use trainer_engine::catalog::{Dtype, WeightFormat};
    use trainer_engine::scenario::fleet::FleetScenario;
    let pool = |extra: &str| {
        let text = format!(
            "[[pools]]\nname = \"p\"\nmodel = \"llama-3.1-8b\"\ngpu = \"h100-sxm\"\nreplicas = 2\n{extra}\n"
        );
        FleetScenario::from_toml(&text).map(|s| s.arms[0].1.pools[0].replica.deployment.clone())
    };
    let d = pool("weight_dtype = \"fp8\"").unwrap();
    assert_eq!(d.weight_format(), WeightFormat::Fp8);
    let d =
        pool("weight_dtype = \"fp8\"\nactivation_dtype = \"bf16\"\nkv_dtype = \"fp8\"").unwrap();
    assert_eq!(d.weight_format(), WeightFormat::Fp8WeightOnly);
    assert_eq!(d.kv_dtype, Dtype::Fp8);
    let d = pool("").unwrap();
    assert_eq!(d.weight_format(), WeightFormat::Bf16);
    let e = pool("activation_dtype = \"fp8\"").unwrap_err();
    assert!(e.field.ends_with("activation_dtype"), "{e:?}");
    assert!(e.message.contains("FP8 weights"), "{e:?}");
}
