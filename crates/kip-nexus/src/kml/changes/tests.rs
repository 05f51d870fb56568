//! Folding touches, and the ranges of bulk creations.

use kip_store::{ConceptId, ElementId};
use serde_json::Map;

use super::fold::{Changes, state};
use super::model::{BeforeImage, ElementChange, Kind, Op, element};

fn change(op: Op, name: &str) -> ElementChange {
    ElementChange {
        op,
        kind: Kind::Concept,
        id: "C:1".into(),
        type_name: Some("Drug".into()),
        name: Some(name.into()),
        subject: None,
        predicate: None,
        object: None,
        before: (op != Op::Created).then(|| state(&Map::new(), &Map::new())),
        after: (op != Op::Deleted).then(|| state(&Map::new(), &Map::new())),
    }
}

fn folded(ops: &[Op]) -> Vec<Op> {
    let mut c = Changes::default();
    let e = ElementId::Concept(ConceptId(1));
    for &op in ops {
        c.note(e, change(op, "A"));
    }
    c.into_list().iter().map(|c| c.op).collect()
}

#[test]
fn touches_of_one_element_fold_into_one_change() {
    assert_eq!(folded(&[Op::Created, Op::Updated]), [Op::Created]);
    assert_eq!(folded(&[Op::Updated, Op::Updated]), [Op::Updated]);
    assert_eq!(folded(&[Op::Updated, Op::Deleted]), [Op::Deleted]);
    assert_eq!(folded(&[Op::Created, Op::Deleted]), [] as [Op; 0]);
}

#[test]
fn a_created_change_has_no_before_even_after_an_update() {
    let mut c = Changes::default();
    let e = ElementId::Concept(ConceptId(1));
    c.note(e, change(Op::Created, "A"));
    c.note(e, change(Op::Updated, "A"));
    let list = c.into_list();
    assert_eq!(list[0].before, None);
    assert!(list[0].after.is_some());
}

/// A command's image: `n` lean creations of concepts from `first` on,
/// and the link range `links`.
fn image(first: u64, n: u64, links: Option<(u64, u64)>) -> BeforeImage {
    let changes = (first..first + n)
        .map(|i| ElementChange {
            id: format!("C:{i}"),
            after: None,
            ..change(Op::Created, "A")
        })
        .collect();
    let created = links
        .map(|(a, b)| (element(1, a), element(1, b)))
        .into_iter()
        .collect();
    BeforeImage {
        changes,
        created,
        lean_listed: 0,
    }
}

#[test]
fn commands_that_together_create_in_bulk_leave_one_range_per_kind() {
    // Two small commands: listed one by one, as each alone would be.
    let mut small = BeforeImage::default();
    small.extend(image(1, 400, None));
    small.extend(image(401, 400, None));
    assert_eq!((small.changes.len(), small.created.len()), (800, 0));
    // Then past the bulk threshold: every lean creation in a range,
    // concepts' first, and the parts' ranges joined.
    small.extend(image(801, 400, Some((1, 10))));
    small.extend(image(1201, 400, Some((11, 20))));
    assert!(small.changes.is_empty());
    assert_eq!(
        small.created,
        [
            (element(0, 1), element(0, 1600)),
            (element(1, 1), element(1, 20)),
        ]
    );
    // A schema creation or a change with its state stays listed.
    let mut kept = change(Op::Created, "Drug");
    kept.type_name = Some(crate::graph::CONCEPT_TYPE.into());
    small.extend(BeforeImage {
        changes: vec![kept, change(Op::Updated, "B")],
        created: Vec::new(),
        lean_listed: 0,
    });
    assert_eq!(small.changes.len(), 2);
}
