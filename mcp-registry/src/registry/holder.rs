//! Which server answers to a plain name several servers may share (a tool's, a prompt's):
//! the one enabled server that has it, else why none does.

use crate::server::Server;

/// An entry of a plain-name index: the server it belongs to, and whether that server is
/// enabled.
pub(crate) trait Held {
    fn server(&self) -> &Server;
    fn enabled(&self) -> bool;
}

impl<T: Held> Held for &T {
    fn server(&self) -> &Server {
        (**self).server()
    }
    fn enabled(&self) -> bool {
        (**self).enabled()
    }
}

/// Who holds a plain name, among the entries the index has under it.
pub(crate) enum Holder<'a, R> {
    /// The one enabled server's entry.
    Only(&'a R),
    /// Several enabled servers have it: their names, in index order.
    Ambiguous(Vec<String>),
    /// No enabled server has it: the first server's name.
    Disabled(String),
}

/// Who of `entries` holds their name (an index keeps no empty list; for one, `Disabled` names
/// no server). Inlined: the names of the error cases are made only when they happen.
#[inline]
pub(crate) fn holder<R: Held>(entries: &[R]) -> Holder<'_, R> {
    let mut enabled = entries.iter().filter(|e| e.enabled());
    match (enabled.next(), enabled.next()) {
        (Some(only), None) => Holder::Only(only),
        (Some(_), Some(_)) => Holder::Ambiguous(
            entries
                .iter()
                .filter(|e| e.enabled())
                .map(|e| e.server().name().to_owned())
                .collect(),
        ),
        (None, _) => Holder::Disabled(
            entries
                .first()
                .map(|e| e.server().name().to_owned())
                .unwrap_or_default(),
        ),
    }
}
