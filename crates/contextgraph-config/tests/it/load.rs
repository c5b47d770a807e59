//! Loading `cgp.toml`: discovery, merge precedence, and errors that name
//! file, line, column and key.

use std::path::{Path, PathBuf};

use contextgraph_config::{
    Config, ConfigError, Environment, Origin, ProviderKind, TokenSource, DEFAULT_BUDGET,
};

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

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str(text, Path::new("/repo/cgp.toml"), &Environment::default())
}

fn at(e: &ConfigError) -> (usize, usize, Option<&str>) {
    let (l, c) = e.position().expect("an error inside the file");
    (l, c, e.key())
}

#[test]
fn no_config_at_all_is_the_builtin_workspace_provider_and_defaults() {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let config = Config::load_with(&ws, None, &env_with_home(home.path())).unwrap();
    assert_eq!(config.files, Vec::<PathBuf>::new());
    assert_eq!(config.budget.value, DEFAULT_BUDGET);
    // The built-ins, in name order: history (started only in a git
    // working tree) and workspace.
    assert_eq!(config.providers.len(), 2);
    assert_eq!(config.providers[0].name, "history");
    assert_eq!(
        config.providers[0].kind,
        ProviderKind::History { dir: None }
    );
    assert!(config.providers[0].enabled);
    assert_eq!(config.providers[1].name, "workspace");
    assert_eq!(
        config.providers[1].kind,
        ProviderKind::Workspace { dir: None }
    );
    assert_eq!(config.providers[1].origin, Origin::Default);
    assert_eq!(
        config,
        Config {
            files: config.files.clone(),
            ..Config::default()
        }
    );
}

#[test]
fn one_line_turns_the_history_provider_off() {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(
        ws.join("cgp.toml"),
        "[providers.history]\nenabled = false\n",
    )
    .unwrap();
    let config = Config::load_with(&ws, None, &env_with_home(home.path())).unwrap();
    let history = config.provider("history").unwrap();
    assert_eq!(history.kind, ProviderKind::History { dir: None });
    assert!(!history.enabled);
    assert_eq!(
        config
            .enabled_providers()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["workspace"]
    );
}

#[test]
fn the_workspace_file_is_found_walking_up_and_wins_per_key_and_per_provider() {
    let home = tempfile::tempdir().unwrap();
    let env = env_with_home(home.path());
    let user = write(
        &home.path().join("xdg/cgp/cgp.toml"),
        "budget = 1000\nsafety_factor = 2.0\n[providers.notes]\ncommand = \"user-notes\"\n[providers.search]\nurl = \"https://s.example/cgp\"\ntoken_env = \"S_TOKEN\"\n",
    );
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let ws_file = write(
        &repo.join("cgp.toml"),
        "budget = 4000\n\n[providers.notes]\ncommand = \"ws-notes\"\nargs = [\"--x\"]\n",
    );
    let sub = repo.join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    // The user trusts the workspace file (its `notes` runs a program).
    contextgraph_config::TrustStore::for_env(&env)
        .unwrap()
        .trust(
            &contextgraph_config::trust::trust_location(&ws_file),
            &contextgraph_config::trust::sha256_hex(&std::fs::read(&ws_file).unwrap()),
        )
        .unwrap();
    let config = Config::load_with(&sub, None, &env).unwrap();
    assert_eq!(config.files, vec![user.clone(), ws_file.clone()]);
    // Per key: the workspace's budget, the user's safety factor.
    assert_eq!(config.budget.value, 4000);
    assert_eq!(
        config.budget.origin,
        Origin::File {
            path: ws_file.clone(),
            line: 1
        }
    );
    assert_eq!(config.safety_factor.value, 2.0);
    assert_eq!(
        config.safety_factor.origin,
        Origin::File {
            path: user.clone(),
            line: 2
        }
    );
    // Per provider: the workspace's `notes` whole, the user's `search`, the built-in workspace.
    let names: Vec<&str> = config.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["history", "notes", "search", "workspace"]);
    let notes = config.provider("notes").unwrap();
    assert_eq!(
        notes.origin,
        Origin::File {
            path: ws_file,
            line: 3
        }
    );
    match &notes.kind {
        ProviderKind::Stdio { command, args, .. } => {
            assert_eq!(command, Path::new("ws-notes"));
            assert_eq!(args, &["--x".to_owned()]);
        }
        other => panic!("{other:?}"),
    }
    match &config.provider("search").unwrap().kind {
        ProviderKind::Http { token, .. } => {
            assert_eq!(token, &Some(TokenSource::Env("S_TOKEN".into())))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_walk_stops_at_the_repository_root() {
    let home = tempfile::tempdir().unwrap();
    write(&home.path().join("cgp.toml"), "budget = 1\n");
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let config = Config::load_with(&repo, None, &env_with_home(&home.path().join("h"))).unwrap();
    assert!(config.files.is_empty(), "{:?}", config.files);
}

#[test]
fn an_explicit_file_replaces_discovery_and_a_missing_one_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    let env = env_with_home(home.path());
    write(&home.path().join("xdg/cgp/cgp.toml"), "budget = 1000\n");
    let explicit = write(&home.path().join("other.toml"), "timeout_ms = 50\n");
    let config = Config::load_with(home.path(), Some(&explicit), &env).unwrap();
    assert_eq!(config.files, vec![explicit]);
    assert_eq!(config.budget.value, DEFAULT_BUDGET);
    assert_eq!(config.timeout_ms.value, 50);
    let err =
        Config::load_with(home.path(), Some(&home.path().join("nope.toml")), &env).unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Missing {
                asked_by: "--config",
                ..
            }
        ),
        "{err}"
    );
    let env = Environment {
        cgp_config: Some(home.path().join("gone.toml")),
        ..env
    };
    let err = Config::load_with(home.path(), None, &env).unwrap_err();
    assert!(err.to_string().contains("CGP_CONFIG"), "{err}");
}

#[test]
fn an_unknown_key_names_file_line_column_and_key() {
    let err =
        parse("budget = 100\n\n[providers.notes]\ncommand = \"x\"\n  timout_ms = 5\n").unwrap_err();
    assert_eq!(at(&err), (5, 3, Some("timout_ms")), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("/repo/cgp.toml:5:3: key `timout_ms`: unknown field"),
        "{text}"
    );
    let err = parse("budgit = 100\n").unwrap_err();
    assert_eq!(at(&err), (1, 1, Some("budgit")), "{err}");
}

#[test]
fn c8_a_literal_token_is_refused_pointing_to_token_env_and_never_echoed() {
    let err =
        parse("[providers.search]\nurl = \"https://s.example/cgp\"\ntoken = \"sk-live-123\"\n")
            .unwrap_err();
    assert_eq!(at(&err), (3, 9, Some("providers.search.token")), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("token_env") && text.contains("token_file"),
        "{text}"
    );
    assert!(!text.contains("sk-live-123"), "{text}");
}

#[test]
fn c8_credentials_in_a_url_are_refused() {
    let err = parse("[providers.s]\nurl = \"https://me:pw@s.example/cgp\"\n").unwrap_err();
    assert!(err.to_string().contains("credentials"), "{err}");
    assert!(!err.to_string().contains("pw@"), "{err}");
}

#[test]
fn a_key_of_another_provider_type_is_an_error() {
    let err = parse("[providers.notes]\ncommand = \"x\"\nurl = \"https://a/b\"\n").unwrap_err();
    assert_eq!(at(&err), (3, 7, Some("providers.notes.url")), "{err}");
    assert!(
        err.to_string()
            .contains("does not apply to a stdio provider"),
        "{err}"
    );
}

#[test]
fn values_out_of_range_and_missing_required_keys_are_errors_at_their_key() {
    let cases: &[(&str, (usize, Option<&str>))] = &[
        ("budget = 0\n", (1, Some("budget"))),
        ("safety_factor = 0.5\n", (1, Some("safety_factor"))),
        ("timeout_ms = 0\n", (1, Some("timeout_ms"))),
        (
            "[providers.d]\ntype = \"docs\"\n",
            (1, Some("providers.d.dir")),
        ),
        (
            "[providers.x]\ntype = \"ftp\"\n",
            (2, Some("providers.x.type")),
        ),
        ("[providers.x]\nweight = 2\n", (1, Some("providers.x.type"))),
        (
            "[providers.w]\ntype = \"workspace\"\nweight = 0\n",
            (3, Some("providers.w.weight")),
        ),
        (
            "[providers.h]\nurl = \"ftp://x\"\n",
            (2, Some("providers.h.url")),
        ),
        (
            "[providers.h]\nurl = \"https://x\"\ntoken_env = \"a token\"\n",
            (3, Some("providers.h.token_env")),
        ),
        (
            "[providers.\"bad name\"]\ncommand = \"x\"\n",
            (1, Some("providers.bad name")),
        ),
        ("budget = \"lots\"\n", (1, Some("budget"))),
    ];
    for (text, (line, key)) in cases {
        let err = parse(text).unwrap_err();
        let (l, _, k) = at(&err);
        assert_eq!((l, k), (*line, *key), "{text:?} gave {err}");
    }
}

#[test]
fn paths_are_relative_to_the_file_and_tilde_is_home() {
    let env = Environment {
        home: Some("/home/u".into()),
        ..Environment::default()
    };
    let config = Config::from_toml_str(
        "consent_store = \"~/c.ndjson\"\n[providers.docs]\ndir = \"docs\"\n[providers.n]\ncommand = \"./bin/p\"\ncwd = \"/abs\"\n",
        Path::new("/repo/cgp.toml"),
        &env,
    )
    .unwrap();
    assert_eq!(
        config.consent_store.as_ref().unwrap().value,
        PathBuf::from("/home/u/c.ndjson")
    );
    assert_eq!(
        config.provider("docs").unwrap().kind,
        ProviderKind::Docs {
            dir: "/repo/docs".into()
        }
    );
    match &config.provider("n").unwrap().kind {
        ProviderKind::Stdio { command, cwd, .. } => {
            assert_eq!(command, Path::new("/repo/bin/p"));
            assert_eq!(cwd.as_deref(), Some(Path::new("/abs")));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_rendered_toml_loads_back_to_the_same_configuration_without_token_values() {
    let text = "budget = 1234\nsafety_factor = 1.5\ntimeout_ms = 700\n\
        [providers.workspace]\nenabled = false\n\
        [providers.docs]\ndir = \"/d\"\nweight = 3\n\
        [providers.n]\ncommand = \"cgp\"\nargs = [\"serve\", \"docs\", \"a \\\"b\\\"\"]\nenv = { A_B = \"1\" }\npass_env = [\"LANG\"]\ntimeout_ms = 9\n\
        [providers.h]\nurl = \"https://h.example/cgp\"\ntoken_env = \"H_TOKEN\"\n";
    let path = Path::new("/repo/cgp.toml");
    let config = Config::from_toml_str(text, path, &Environment::default()).unwrap();
    let rendered = config.to_toml();
    assert!(rendered.contains("token_env = \"H_TOKEN\""), "{rendered}");
    let back = Config::from_toml_str(&rendered, path, &Environment::default()).unwrap();
    let strip = |c: &Config| {
        c.providers
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.kind.clone(),
                    p.timeout_ms,
                    p.weight,
                    p.enabled,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&back), strip(&config));
    assert_eq!(back.budget.value, 1234);
    assert_eq!(back.safety_factor.value, 1.5);
    assert_eq!(back.timeout_ms.value, 700);
}

#[test]
fn strict_audit_is_off_by_default_set_per_file_and_rendered() {
    let config = parse("").unwrap();
    assert!(!config.strict_audit.value);
    assert_eq!(config.strict_audit.origin, Origin::Default);
    let config = parse("budget = 10\nstrict_audit = true\n").unwrap();
    assert!(config.strict_audit.value);
    assert_eq!(
        config.strict_audit.origin,
        Origin::File {
            path: PathBuf::from("/repo/cgp.toml"),
            line: 2
        }
    );
    let again = parse(&config.to_toml()).unwrap();
    assert!(again.strict_audit.value, "{}", config.to_toml());
    let e = parse("strict_audit = \"yes\"\n").unwrap_err();
    assert_eq!(at(&e).0, 1, "{e}");
}

#[test]
fn an_untrusted_workspace_file_may_turn_the_strict_audit_on_but_not_off() {
    let home = tempfile::tempdir().unwrap();
    let env = env_with_home(home.path());
    write(
        &home.path().join("xdg/cgp/cgp.toml"),
        "strict_audit = true\n",
    );
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo.join("cgp.toml"), "strict_audit = false\n");
    let config = Config::load_with(&repo, None, &env).unwrap();
    assert!(config.strict_audit.value, "the user's setting holds");
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.message.contains("strict_audit = false is ignored")),
        "{:?}",
        config.warnings
    );
    // Turning it on needs no trust.
    write(&home.path().join("xdg/cgp/cgp.toml"), "budget = 100\n");
    write(&repo.join("cgp.toml"), "strict_audit = true\n");
    let config = Config::load_with(&repo, None, &env).unwrap();
    assert!(config.strict_audit.value);
}

#[test]
fn a_stdio_provider_runs_in_the_directory_of_the_file_that_names_it_by_default() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("deep/sub")).unwrap();
    write(
        &repo.join("cgp.toml"),
        "[providers.notes]\ncommand = \"python3\"\nargs = [\"provider.py\"]\n\n[providers.elsewhere]\ncommand = \"python3\"\ncwd = \"tools\"\n",
    );
    // Loaded from a subdirectory: the provider still runs where its file
    // is, so `provider.py` is the one beside cgp.toml.
    let config = Config::load_with(
        &repo.join("deep/sub"),
        Some(&repo.join("cgp.toml")),
        &env_with_home(home.path()),
    )
    .unwrap();
    let cwd_of = |name: &str| match &config.provider(name).unwrap().kind {
        ProviderKind::Stdio { cwd, .. } => cwd.clone(),
        other => panic!("{other:?}"),
    };
    let canonical = std::fs::canonicalize(&repo).unwrap();
    let dir = cwd_of("notes").unwrap();
    assert_eq!(std::fs::canonicalize(&dir).unwrap(), canonical);
    assert_eq!(
        cwd_of("elsewhere").unwrap(),
        dir.join("tools"),
        "a cwd given is relative to the file too"
    );
}

#[test]
fn a_command_with_a_space_is_refused_with_the_args_form_to_use() {
    let e = parse("[providers.p]\ncommand = \"python3 provider.py\"\n").unwrap_err();
    let text = e.to_string();
    assert_eq!(at(&e).2, Some("providers.p.command"), "{text}");
    assert!(text.contains("arguments go in `args`"), "{text}");
    assert!(
        text.contains("args = [\\\"provider.py\\\"]") || text.contains("args = [\"provider.py\"]"),
        "{text}"
    );
    // A path with a space that exists is a program.
    let dir = tempfile::tempdir().unwrap();
    let program = write(&dir.path().join("my tools/provider"), "#!/bin/sh\n");
    let text = format!(
        "[providers.p]\ncommand = {:?}\n",
        program.display().to_string()
    );
    let config =
        Config::from_toml_str(&text, &dir.path().join("cgp.toml"), &Environment::default())
            .unwrap();
    assert!(matches!(
        &config.provider("p").unwrap().kind,
        ProviderKind::Stdio { command, .. } if command == &program
    ));
}
