//! Which steps of the ranking layer are on, and the environment switches
//! (`CGP_RANK_SIGNALS_OFF`, `CGP_RANK_SIGNALS_ON`) that turn them off and
//! on in the shipped servers as in the benches.

/// Which steps of the layer are on: all of them by default; the benchmark
/// and the tests switch one off at a time to measure what it is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RerankSignals {
    /// Step 2.
    pub definitions: bool,
    /// Step 3.
    pub roles: bool,
    /// Step 4.
    pub coherence: bool,
    /// Step 5.
    pub saturation: bool,
    /// Step 4 for pasted text (a goal some candidate holds as an exact
    /// phrase): the coherence share stays at `PASTED_COHERENCE_SHARE`
    /// (0.25) instead of `COHERENCE_SHARE` (0.5), since where the text is
    /// written is the answer. Off, pasted text gets the full share.
    pub pasted_coherence: bool,
    /// Step 4's division by the file's chunk count (to the power `FOCUS_EXPONENT`, 0.25).
    pub file_focus: bool,
    /// The file-name share of the lexical stage's path signal
    /// (`rank::W_FILE_NAME`): goal words naming the file itself count
    /// more than goal words naming its directories.
    pub file_name: bool,
    /// Step 3's refinement for test files (`TEST_FILE_FACTOR`, x0.16).
    /// **Off by default** since issue 24: on the third-party set's tuning
    /// half it cost 0.004 NDCG@10 (0.796 off, 0.792 on), a signal tuned on
    /// our own queries that does not pay on other people's (test files
    /// keep the test role's x0.4).
    pub test_files: bool,
    /// Step 3's refinement for goals that describe code
    /// (`CODE_GOAL_DOCS_FACTOR`, x0.0625). **Off by default** since issue
    /// 24: it moved no query of the third-party set's tuning half (docs
    /// keep the docs role's x0.25).
    pub code_goals: bool,
    /// The semantic signal (static embeddings) fused with the lexical score.
    pub semantic: bool,
    /// The relevance floor (`search::RELEVANCE_FLOOR`): candidates scoring
    /// under a tenth of the best one are left out of the answer.
    pub floor: bool,
    /// Step 6: a question's files lifted by their best semantic score
    /// (`QUESTION_SEMANTIC_SHARE`, 0.1 of the top score).
    pub question_semantic: bool,
    /// Step 7: a question's files lifted by their coherence share times
    /// their best semantic score (`QUESTION_AGREEMENT_SHARE`, 0.4).
    pub question_agreement: bool,
    /// The semantic signal weighs more for a prose goal whose words the best
    /// lexical matches lack (`rank::W_SEMANTIC_UNCOVERED`). **Off by
    /// default**: it paid with the v2 model alone, but not beside steps 6
    /// and 7 (tuning half, with both this and `semantic_files` on / off:
    /// 0.862 / 0.870); `CGP_RANK_SIGNALS_ON` switches it on.
    pub semantic_uncovered: bool,
    /// A question's semantic score blends in the chunk's whole file
    /// (`semantic::QUESTION_FILE_SHARE`). **Off by default**, for the same
    /// reason as `semantic_uncovered` (steps 6 and 7 already lift a
    /// question's files by meaning).
    pub semantic_files: bool,
    /// The model alone: the lexical score's weight in the fusion is zero
    /// and the semantic score's is one (the name, path and proximity
    /// signals and the layer's steps stay). **Off by default**; a
    /// measuring switch (`CGP_RANK_SIGNALS_ON=model_alone`) that tells
    /// embedding models apart where the fused ranking barely moves.
    pub model_alone: bool,
}

impl Default for RerankSignals {
    fn default() -> Self {
        RerankSignals {
            definitions: true,
            roles: true,
            coherence: true,
            pasted_coherence: true,
            saturation: true,
            file_focus: true,
            file_name: true,
            test_files: false,
            code_goals: false,
            semantic: true,
            floor: true,
            question_semantic: true,
            question_agreement: true,
            semantic_uncovered: false,
            semantic_files: false,
            model_alone: false,
        }
    }
}

impl RerankSignals {
    /// Every step off: the lexical ranking as it was.
    pub const NONE: RerankSignals = RerankSignals {
        definitions: false,
        roles: false,
        coherence: false,
        pasted_coherence: false,
        saturation: false,
        file_focus: false,
        file_name: false,
        test_files: false,
        code_goals: false,
        semantic: false,
        floor: false,
        question_semantic: false,
        question_agreement: false,
        semantic_uncovered: false,
        semantic_files: false,
        model_alone: false,
    };

    /// The default with the signals named in `CGP_RANK_SIGNALS_OFF`
    /// switched off, then those named in `CGP_RANK_SIGNALS_ON` switched on
    /// (comma-separated names of [`SIGNAL_NAMES`]; `all` in
    /// `CGP_RANK_SIGNALS_OFF` is every one). Read by the benchmarks and by
    /// the shipped `cgp context` and `cgp serve workspace` (through
    /// [`crate::WorkspaceOptions::with_ranking_from_env`]), so anyone can
    /// measure a signal's worth on their own repository; unset means the
    /// default. A name that is no signal is an error, not a silent no-op:
    /// a misspelt ablation would otherwise measure nothing.
    pub fn from_env() -> Result<RerankSignals, RankingEnvError> {
        let read = |var: &'static str| match std::env::var(var) {
            Ok(v) => Ok(Some(v)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(RankingEnvError {
                var,
                value: "(not UTF-8)".to_owned(),
                expected: "comma-separated signal names",
            }),
        };
        RerankSignals::from_lists(
            read(SIGNALS_OFF_VAR)?.as_deref(),
            read(SIGNALS_ON_VAR)?.as_deref(),
        )
    }

    /// The default with the signals in `off` switched off, then those in
    /// `on` switched on (the values of `CGP_RANK_SIGNALS_OFF` and
    /// `CGP_RANK_SIGNALS_ON`; see [`RerankSignals::from_env`]).
    pub fn from_lists(
        off: Option<&str>,
        on: Option<&str>,
    ) -> Result<RerankSignals, RankingEnvError> {
        let mut s = RerankSignals::default();
        for (var, list, value) in [(SIGNALS_OFF_VAR, off, false), (SIGNALS_ON_VAR, on, true)] {
            let Some(list) = list else { continue };
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if name == "all" && !value {
                    s = RerankSignals::NONE;
                } else if let Some(flag) = s.flag(name) {
                    *flag = value;
                } else {
                    return Err(RankingEnvError {
                        var,
                        value: name.to_owned(),
                        expected: "a signal name",
                    });
                }
            }
        }
        Ok(s)
    }

    /// The names of the signals that differ from the default, each with
    /// `+` (switched on) or `-` (switched off): what a server says on
    /// stderr when an ablation is in force.
    pub fn changes(&self) -> Vec<String> {
        let default = RerankSignals::default();
        let mut a = *self;
        let mut d = default;
        SIGNAL_NAMES
            .iter()
            .filter_map(|name| {
                let now = *a.flag(name)?;
                let was = *d.flag(name)?;
                (now != was).then(|| format!("{}{name}", if now { '+' } else { '-' }))
            })
            .collect()
    }

    /// The switch named `name` (as in `CGP_RANK_SIGNALS_OFF`).
    pub fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "definitions" => &mut self.definitions,
            "roles" => &mut self.roles,
            "coherence" => &mut self.coherence,
            "pasted_coherence" => &mut self.pasted_coherence,
            "saturation" => &mut self.saturation,
            "file_focus" => &mut self.file_focus,
            "file_name" => &mut self.file_name,
            "test_files" => &mut self.test_files,
            "code_goals" => &mut self.code_goals,
            "semantic" => &mut self.semantic,
            "floor" => &mut self.floor,
            "question_semantic" => &mut self.question_semantic,
            "question_agreement" => &mut self.question_agreement,
            "semantic_uncovered" => &mut self.semantic_uncovered,
            "semantic_files" => &mut self.semantic_files,
            "model_alone" => &mut self.model_alone,
            _ => return None,
        })
    }
}

/// The variable naming the signals to switch off.
pub const SIGNALS_OFF_VAR: &str = "CGP_RANK_SIGNALS_OFF";
/// The variable naming the signals to switch on.
pub const SIGNALS_ON_VAR: &str = "CGP_RANK_SIGNALS_ON";

/// Every switch's name, as `CGP_RANK_SIGNALS_OFF` and `CGP_RANK_SIGNALS_ON`
/// take them.
pub const SIGNAL_NAMES: &[&str] = &[
    "definitions",
    "roles",
    "coherence",
    "pasted_coherence",
    "saturation",
    "file_focus",
    "file_name",
    "test_files",
    "code_goals",
    "semantic",
    "floor",
    "question_semantic",
    "question_agreement",
    "semantic_uncovered",
    "semantic_files",
    "model_alone",
];

/// A ranking switch variable whose value is not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankingEnvError {
    /// The variable.
    pub var: &'static str,
    /// The value (or list item) not understood.
    pub value: String,
    /// What was expected instead.
    pub expected: &'static str,
}

impl std::fmt::Display for RankingEnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: '{}' is not {}; ",
            self.var,
            contextgraph_types::display_text::for_terminal(&self.value),
            self.expected
        )?;
        if self.var == crate::options::SEMANTIC_VAR {
            write!(f, "use 0 (off) or 1 (on), or unset it")
        } else {
            write!(
                f,
                "use a comma-separated list of {} (or `all` to switch every one off), or unset it",
                SIGNAL_NAMES.join(", ")
            )
        }
    }
}

impl std::error::Error for RankingEnvError {}
