//! Who calls a run operation and what it may do (docs/security.md, "Clients"): the admin
//! token sees and acts on every run; a named token acts within its scopes, on its own runs
//! only. Another client's run is answered exactly as an unknown one
//! ([`RunServiceError::NotFound`]), so ids do not leak; a missing scope is
//! [`RunServiceError::Forbidden`]. This is the rule's one place: the server turns a token
//! into a [`Caller`], the [`RunService`](crate::service::RunService) asks it.

use domain::model::names::Named;
use domain::ports::RunRecord;
use serde::{Deserialize, Serialize};

use crate::service_error::{unknown_run, RunServiceError};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Create runs (owned by the token's name) and cancel its own runs.
    Submit,
    /// List, show and follow its own runs, and download their files.
    Read,
    /// Answer its own runs' questions and approval requests.
    Approve,
    /// Everything, on every run.
    Admin,
}

impl Scope {
    /// Every scope, in the order they are listed.
    pub const ALL: [Scope; 4] = [Scope::Submit, Scope::Read, Scope::Approve, Scope::Admin];
}

/// The one source of the scopes' names and help (`planwright token add --scope`, the
/// token file, error messages).
impl Named for Scope {
    const WHAT: &'static str = "scope";
    fn all() -> &'static [Scope] {
        &Scope::ALL
    }
    fn name(self) -> &'static str {
        match self {
            Scope::Submit => "submit",
            Scope::Read => "read",
            Scope::Approve => "approve",
            Scope::Admin => "admin",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Scope::Submit => "Create runs (owned by the token's name) and cancel its own runs",
            Scope::Read => "List, show and follow its own runs, and download their files",
            Scope::Approve => "Answer its own runs' questions and approval requests",
            Scope::Admin => "Everything, on every run",
        }
    }
}

/// The caller of one operation, as the token it presented says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's name; `None` for the server's own (admin) token and the local user of
    /// `planwright mcp serve`.
    name: Option<String>,
    scopes: Vec<Scope>,
}

impl Caller {
    /// The server's own token, or the local user: every run, every operation.
    pub fn admin() -> Caller {
        Caller {
            name: None,
            scopes: vec![Scope::Admin],
        }
    }

    /// A named token with its scopes.
    pub fn named(name: &str, scopes: &[Scope]) -> Caller {
        Caller {
            name: Some(name.to_string()),
            scopes: scopes.to_vec(),
        }
    }

    /// A caller nothing is known of (no identity reached the handler): allowed nothing.
    pub fn nobody() -> Caller {
        Caller {
            name: None,
            scopes: Vec::new(),
        }
    }

    pub fn is_admin(&self) -> bool {
        self.scopes.contains(&Scope::Admin)
    }

    /// The owner recorded on the runs this caller creates.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Refuses ([`RunServiceError::Forbidden`]) an operation that needs `scope` when the token lacks it.
    pub fn require(&self, scope: Scope) -> Result<(), RunServiceError> {
        if self.is_admin() || self.scopes.contains(&scope) {
            return Ok(());
        }
        let who = self.name.as_deref().unwrap_or("this");
        Err(RunServiceError::Forbidden(format!(
            "the token '{who}' lacks the `{}` scope (docs/security.md, \"Clients\")",
            scope.name()
        )))
    }

    /// Whether the run is this caller's to see: admin sees every run, a named token only
    /// the runs it created.
    pub fn sees(&self, run: &RunRecord) -> bool {
        self.is_admin() || (self.name.is_some() && run.client == self.name)
    }

    /// `run` when this caller may see it; otherwise the same error as an unknown run.
    pub fn visible(
        &self,
        run: Option<RunRecord>,
        run_id: &str,
    ) -> Result<RunRecord, RunServiceError> {
        run.filter(|r| self.sees(r))
            .ok_or_else(|| unknown_run(run_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::testing::runs::run_record;

    #[test]
    fn a_named_client_sees_only_its_own_runs_and_admin_sees_all() {
        let mut alices = run_record("run_a");
        alices.client = Some("alice".into());
        let unowned = run_record("run_cli");
        let alice = Caller::named("alice", &[Scope::Read]);
        let bob = Caller::named("bob", &[Scope::Read, Scope::Submit, Scope::Approve]);
        assert!(alice.sees(&alices));
        assert!(!bob.sees(&alices));
        assert!(!alice.sees(&unowned), "a run without owner is admin's");
        assert!(Caller::admin().sees(&alices) && Caller::admin().sees(&unowned));
        assert!(!Caller::nobody().sees(&unowned));
        let hidden = bob.visible(Some(alices), "run_a").unwrap_err();
        assert!(matches!(hidden, RunServiceError::NotFound(_)), "{hidden:?}");
    }

    #[test]
    fn a_missing_scope_is_forbidden_and_names_the_scope() {
        let reader = Caller::named("ci", &[Scope::Read]);
        assert!(reader.require(Scope::Read).is_ok());
        let err = reader.require(Scope::Submit).unwrap_err();
        assert!(
            matches!(&err, RunServiceError::Forbidden(m) if m.contains("`submit`") && m.contains("'ci'")),
            "{err:?}"
        );
        for scope in [Scope::Submit, Scope::Read, Scope::Approve, Scope::Admin] {
            assert!(Caller::admin().require(scope).is_ok());
            assert!(Caller::nobody().require(scope).is_err());
        }
    }
}
