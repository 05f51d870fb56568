//! Paths inside an item: JSON Schema's pointers as steps, shown as
//! `[4].source.name`, and the node a path leads to.

use crate::yaml::{Kind, Node};

/// A step of a path inside an item.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

pub(super) fn render(prefix: &str, segs: &[Seg]) -> String {
    let mut out = prefix.to_owned();
    for s in segs {
        match s {
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
            Seg::Key(k) if kip_lang::is_identifier(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Key(k) => out.push_str(&format!(
                "[{}]",
                serde_json::to_string(k).unwrap_or_default()
            )),
        }
    }
    out
}

pub(super) fn segments(pointer: &str) -> Vec<Seg> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| {
            let s = s.replace("~1", "/").replace("~0", "~");
            match s.parse::<usize>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key(s),
            }
        })
        .collect()
}

/// The node at `segs` under `node` (as deep as the path exists).
pub(super) fn node_at<'n>(node: &'n Node, segs: &[Seg]) -> &'n Node {
    let mut cur = node;
    for s in segs {
        let next = match (s, &cur.kind) {
            (Seg::Key(k), Kind::Map(_)) => cur.get(k),
            (Seg::Index(i), Kind::Seq(items)) => items.get(*i),
            // A numeric-looking key of a mapping.
            (Seg::Index(i), Kind::Map(_)) => cur.get(&i.to_string()),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => break,
        }
    }
    cur
}
