//! GTID parsing and arithmetic: server-shaped examples, error wording, and properties checked
//! against a naive one-entry-per-transaction model.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use proptest::prelude::*;
use rwtop::gtid::*;

const MAX_GNO: u64 = 9_223_372_036_854_775_807;
const UUID_A: &str = "3E11FA47-71CA-11E1-9E33-C80AA9429562";
const UUID_B: &str = "1b2c3d4e-aaaa-bbbb-cccc-ddddeeeeffff";
// Few uuids and tags, so that generated sets overlap and the properties bite.
const UUIDS: [&str; 3] = [UUID_A, UUID_B, "ffffffff-ffff-ffff-ffff-ffffffffffff"];
const TAGS: [Option<&str>; 3] = [None, Some("Alpha"), Some("b_2")];

fn set(text: &str) -> GtidSet {
    GtidSet::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

fn list(text: &str) -> GtidList {
    GtidList::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

fn uuid(text: &str) -> ServerUuid {
    ServerUuid::parse(text).unwrap()
}

fn dg(text: &str) -> DomainGtid {
    DomainGtid::parse(text).unwrap()
}

/// Asserts that parsing failed with a message holding every `|`-separated fragment.
fn assert_error<T: std::fmt::Debug>(input: &str, result: Result<T, GtidParseError>, expect: &str) {
    let message = result.unwrap_err().to_string();
    for fragment in expect.split('|') {
        assert!(
            message.contains(fragment),
            "{input:?}: {message:?} lacks {fragment:?}"
        );
    }
}

// ---------------------------------------------------------------- MySQL examples

#[test]
fn multi_line_server_output() {
    let parsed = set(&format!("{UUID_A}:1-5:7-9,\n{UUID_B}:1-3\n"));
    let expected = format!("{UUID_B}:1-3,{}:1-5:7-9", UUID_A.to_lowercase());
    assert_eq!(parsed.to_string(), expected);
    assert_eq!(parsed.count(), 11);
    assert_eq!(
        parsed.uuids().collect::<Vec<_>>(),
        [uuid(UUID_B), uuid(UUID_A)]
    );
    let windows = format!(" {UUID_A} : 1 - 5 : 7-9 ,\r\n\t{UUID_B}:1-3 ,");
    assert_eq!(set(&windows), parsed);
}

#[test]
fn intervals_are_normalized() {
    let a = UUID_A.to_lowercase();
    assert_eq!(set(&format!("{a}:1-3:4-5")), set(&format!("{a}:1-5")));
    assert_eq!(set(&format!("{a}:7-7")).to_string(), format!("{a}:7"));
    let merged = set(&format!("{a}:9:2-4:3-8,{a}:12"));
    assert_eq!(merged.to_string(), format!("{a}:2-9:12"));
}

#[test]
fn empty_inputs_are_the_empty_set() {
    for text in ["", " ", "\n\t\r\n", ",", " , ,\n"] {
        let parsed = set(text);
        assert!(parsed.is_empty() && parsed.count() == 0);
        assert_eq!(parsed, GtidSet::empty());
        assert_eq!(parsed.to_string(), "");
    }
}

#[test]
fn tagged_sets_merge_and_print_canonically() {
    let parsed = set(&format!(
        "{UUID_A}:Domain_1:1-3:7:1-5,\n{UUID_A}:aa:2,{UUID_B}:zz:4"
    ));
    let a = UUID_A.to_lowercase();
    assert_eq!(
        parsed.to_string(),
        format!("{UUID_B}:zz:4,{a}:aa:2:domain_1:1-5:7")
    );
    let tagged = Gtid::parse(&format!("{UUID_A}:DOMAIN_1:4")).unwrap();
    assert_eq!(tagged.tag.as_deref(), Some("domain_1"));
    assert!(parsed.contains(&tagged));
    let longest = format!("_{}Z", "z9".repeat(15)); // 32 characters, the maximum
    let expected = format!("{UUID_B}:{}:1", longest.to_lowercase());
    assert_eq!(set(&format!("{UUID_B}:{longest}:1")).to_string(), expected);
    // Tags separate transaction number spaces.
    assert!(!parsed.contains(&Gtid::parse(&format!("{UUID_A}:4")).unwrap()));
}

#[test]
fn backlog_of_huge_sets_is_cheap() {
    let primary = set(&format!("{UUID_A}:1-100000000,{UUID_B}:1-5"));
    let replica = set(&format!("{UUID_A}:1-99999990"));
    assert_eq!(primary.subtract(&replica).count(), 15);
    assert!(replica.subtract(&primary).is_empty());
    assert!(primary.is_superset_of(&replica));
    let full = set(&format!("{UUID_A}:1-{MAX_GNO},{UUID_B}:1-{MAX_GNO}"));
    assert_eq!(full.count(), 2 * u128::from(MAX_GNO));
}

#[test]
fn single_gtids() {
    let gtid = Gtid::parse(&format!(" {UUID_A}:Tag_1:5 ")).unwrap();
    assert_eq!(gtid.gno, 5);
    assert_eq!(
        gtid.to_string(),
        format!("{}:tag_1:5", UUID_A.to_lowercase())
    );
    assert_eq!(Gtid::parse(&gtid.to_string()), Ok(gtid.clone()));
    assert_eq!(gtid.to_string().parse::<Gtid>(), Ok(gtid));
    let mut grown = GtidSet::empty();
    for gno in [3, 1, 2, 0, MAX_GNO + 1] {
        let tag = Some("X".to_owned());
        grown.add(&Gtid {
            uuid: uuid(UUID_B),
            tag,
            gno,
        });
    }
    // Numbers no server can produce are ignored.
    assert_eq!(grown.to_string(), format!("{UUID_B}:x:1-3"));
}

#[test]
fn serde_uses_the_display_form() {
    let parsed = set(&format!("{UUID_A}:1-5:t:3"));
    let json = serde_json::to_string(&parsed).unwrap();
    assert_eq!(json, format!("\"{}:1-5:t:3\"", UUID_A.to_lowercase()));
    assert_eq!(serde_json::from_str::<GtidSet>(&json).unwrap(), parsed);
    let maria = list("1-2-50,0-1-100");
    assert_eq!(serde_json::to_string(&maria).unwrap(), "\"0-1-100,1-2-50\"");
    assert!(serde_json::from_str::<GtidList>("\"0-1\"").is_err());
}

/// `U` stands for `UUID_A`.
const MYSQL_ERRORS: &[(&str, &str)] = &[
    (
        "U:5-3",
        "invalid GTID interval \"5-3\" in \"|start is after end|expected N or N-M",
    ),
    ("U:0", "\"0\"|start at 1"),
    ("U:1-9223372036854775808", "\"1-9223372036854775808\"|limit"),
    (
        "U:99999999999999999999999",
        "\"99999999999999999999999\"|limit",
    ),
    ("U:1x", "\"1x\"|not a decimal number"),
    ("U:+1", "\"+1\""),
    ("U:1:", "empty interval"),
    ("U:1-5:mytag", "no interval after \"mytag\""),
    ("U:one:two:1", "no interval after \"one\""),
    ("U", "no interval after \"3E11FA47"),
    ("U:9tag:1", "\"9tag\"|not a decimal number"),
    ("U:ab-c:1", "invalid GTID tag \"ab-c\""),
    ("U:abcdefghijklmnopqrstuvwxyz0123456:1", "at most 32"),
    ("U:ta\u{e9}:1", "\"ta\u{e9}\"|letters, digits"),
    (
        "not-a-uuid:1",
        "invalid server UUID \"not-a-uuid\"|8-4-4-4-12",
    ),
    (
        "U:1,1b2c3d4e-aaaa-bbbb-cccc-ddddeeeefffZ:1",
        "\"1b2c3d4e-aaaa-bbbb-cccc-ddddeeeefffZ\"",
    ),
];

#[test]
fn mysql_errors_name_the_bad_token() {
    for (input, expect) in MYSQL_ERRORS {
        let input = input.replace('U', UUID_A);
        assert_error(&input, GtidSet::parse(&input), expect);
    }
    let a = UUID_A;
    assert_error(a, Gtid::parse(&format!("{a}:1-5")), ":1-5\"|not a range");
    assert_error(
        a,
        Gtid::parse(&format!("{a}:t:1:2")),
        "expected uuid:N or uuid:tag:N",
    );
}

#[test]
fn error_quotes_are_truncated() {
    let message = GtidSet::parse(&"x".repeat(10_000)).unwrap_err().to_string();
    assert!(message.len() < 300 && message.contains("..."), "{message}");
    let message = GtidSet::parse(&format!("{UUID_A}:1:{}", "é".repeat(500))).unwrap_err();
    assert!(message.to_string().chars().count() < 300, "{message}");
}

// ---------------------------------------------------------------- MariaDB examples

#[test]
fn mariadb_lists() {
    let parsed = list("1-2-50,\n 0-1-100 ");
    assert_eq!(parsed.to_string(), "0-1-100,1-2-50");
    assert_eq!(parsed.seq(0), Some(100));
    assert_eq!(parsed.get(1), Some(&dg("1-2-50")));
    assert_eq!(parsed.domains().collect::<Vec<_>>(), [0, 1]);
    assert!(list("").is_empty() && list(" \n").is_empty());
    assert_eq!(GtidList::empty().to_string(), "");
}

#[test]
fn binlog_state_keeps_highest_seq_per_domain() {
    let state = list("0-1-100,0-2-120,0-3-90,1-2-50,1-7-50");
    // Ties go to the later entry, as MariaDB lists a domain's latest GTID last.
    assert_eq!(state.to_string(), "0-2-120,1-7-50");
}

#[test]
fn mariadb_distance_and_errant() {
    let primary = list("0-1-100,1-2-50");
    let replica = list("0-1-90,2-5-3");
    let rows: Vec<_> = (primary.distance_from(&replica).iter())
        .map(|r| (r.domain, r.ahead, r.behind, r.transactions))
        .collect();
    let expected = [
        (0, Some(100), Some(90), 10),
        (1, Some(50), None, 50),
        (2, None, Some(3), 0),
    ];
    assert_eq!(rows, expected);
    assert_eq!(primary.total_distance(&replica), 60);
    assert_eq!(replica.ahead_of(&primary), [dg("2-5-3")]);
    assert!(
        primary.contains(&dg("0-9-100")),
        "server_id is not compared"
    );
    assert!(!primary.contains(&dg("0-1-101")));
    assert!(!primary.contains(&dg("2-5-1")));
}

const MARIADB_ERRORS: &[(&str, &str)] = &[
    ("0-1", "invalid MariaDB GTID \"0-1\"|three"),
    ("0-1-2-3", "\"0-1-2-3\""),
    ("a-1-2", "\"a\"|domain is not a decimal number"),
    ("4294967296-1-1", "\"4294967296\"|above 4294967295"),
    ("0-4294967296-1", "server_id is above"),
    ("0-1-18446744073709551616", "\"18446744073709551616\""),
    (
        "0-1-100,,1-2-3",
        "empty entry|expected domain-server_id-seq",
    ),
    ("0-1-100,0-1-", "\"0-1-\"|sequence number is missing"),
    ("0-1-+5", "\"+5\""),
];

#[test]
fn mariadb_errors_name_the_bad_token() {
    for (input, expect) in MARIADB_ERRORS {
        assert_error(input, GtidList::parse(input), expect);
    }
}

// ---------------------------------------------------------------- MySQL properties

type Model = BTreeSet<(String, Option<String>, u64)>;
/// A tag index into `TAGS`, then an inclusive interval.
type Run = (usize, u64, u64);
/// A uuid as typed (in either case), then its runs.
type Entry = (String, Vec<Run>);

fn entries() -> impl Strategy<Value = Vec<Entry>> {
    let start = prop_oneof![4 => 1_u64..40, 1 => (MAX_GNO - 12)..=MAX_GNO];
    let run = (0..TAGS.len(), start, 0_u64..8)
        .prop_map(|(tag, start, len)| (tag, start, start.saturating_add(len).min(MAX_GNO)));
    let uuid = (0..UUIDS.len(), any::<bool>()).prop_map(|(index, upper)| {
        let text = UUIDS[index];
        if upper {
            text.to_uppercase()
        } else {
            text.to_lowercase()
        }
    });
    let entry = (uuid, prop::collection::vec(run, 1..5)).prop_map(|(uuid, mut runs)| {
        // Untagged intervals can only come before the first tag of an entry.
        runs.sort_by_key(|run| TAGS[run.0].is_some());
        (uuid, runs)
    });
    prop::collection::vec(entry, 0..5)
}

fn tokens(entries: &[Entry]) -> Vec<String> {
    let mut out = Vec::new();
    for (index, (uuid, runs)) in entries.iter().enumerate() {
        out.extend((index > 0).then(|| ",".to_owned()));
        out.push(uuid.clone());
        for &(tag, start, end) in runs {
            if let Some(tag) = TAGS[tag] {
                out.extend([":".to_owned(), tag.to_owned()]);
            }
            out.extend([":".to_owned(), start.to_string()]);
            if end != start {
                out.extend(["-".to_owned(), end.to_string()]);
            }
        }
    }
    out
}

fn model(entries: &[Entry]) -> Model {
    let mut out = Model::new();
    for (uuid, runs) in entries {
        for &(tag, start, end) in runs {
            let tag = TAGS[tag].map(str::to_lowercase);
            out.extend((start..=end).map(|gno| (uuid.to_lowercase(), tag.clone(), gno)));
        }
    }
    out
}

fn model_of(set: &GtidSet) -> Model {
    let intervals = set.intervals();
    intervals
        .flat_map(|(uuid, tag, gnos)| {
            gnos.map(move |g| (uuid.to_string(), tag.map(String::from), g))
        })
        .collect()
}

/// The canonical text, built independently from the model: the model is sorted by uuid, tag
/// and number, so one pass can open entries, switch tags and extend ranges.
fn canonical(model: &Model) -> String {
    let mut text = String::new();
    let mut previous: Option<(&str, Option<&str>, u64)> = None;
    let mut range_open = false;
    for (uuid, tag, gno) in model {
        let (uuid, tag, gno) = (uuid.as_str(), tag.as_deref(), *gno);
        if previous == Some((uuid, tag, gno.wrapping_sub(1))) {
            (previous, range_open) = (Some((uuid, tag, gno)), true);
            continue;
        }
        if let (true, Some((.., end))) = (range_open, previous) {
            write!(text, "-{end}").unwrap();
        }
        if previous.map(|p| p.0) != Some(uuid) {
            text.push_str(if previous.is_some() { "," } else { "" });
            text.push_str(uuid);
        }
        if previous.map(|p| (p.0, p.1)) != Some((uuid, tag)) {
            text.push_str(&tag.map(|tag| format!(":{tag}")).unwrap_or_default());
        }
        write!(text, ":{gno}").unwrap();
        (previous, range_open) = (Some((uuid, tag, gno)), false);
    }
    if let (true, Some((.., end))) = (range_open, previous) {
        write!(text, "-{end}").unwrap();
    }
    text
}

fn parsed(entries: &[Entry]) -> GtidSet {
    set(&tokens(entries).concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn parse_agrees_with_model_and_round_trips(e in entries()) {
        let (s, m) = (parsed(&e), model(&e));
        prop_assert_eq!(model_of(&s), m.clone());
        prop_assert_eq!(s.count(), m.len() as u128);
        prop_assert_eq!(s.is_empty(), m.is_empty());
        let text = s.to_string();
        prop_assert_eq!(&text, &canonical(&m));
        prop_assert_eq!(text.parse::<GtidSet>(), Ok(s));
    }

    #[test]
    fn whitespace_between_tokens_is_ignored(
        e in entries(),
        gaps in prop::collection::vec("[ \t\r\n]{0,3}", 1..8),
    ) {
        let mut spaced = gaps[0].clone();
        for (i, token) in tokens(&e).iter().enumerate() {
            spaced.push_str(token);
            spaced.push_str(&gaps[i % gaps.len()]);
        }
        prop_assert_eq!(set(&spaced), parsed(&e));
    }

    #[test]
    fn union_laws(a in entries(), b in entries(), c in entries()) {
        let (a, b, c) = (parsed(&a), parsed(&b), parsed(&c));
        prop_assert_eq!(a.union(&b), b.union(&a));
        prop_assert_eq!(a.union(&b).union(&c), a.union(&b.union(&c)));
        prop_assert_eq!(a.union(&a), a.clone());
        prop_assert_eq!(a.union(&GtidSet::empty()), a.clone());
        prop_assert!(a.union(&b).is_superset_of(&a) && a.union(&b).is_superset_of(&b));
    }

    #[test]
    fn difference_and_intersection_laws(a in entries(), b in entries()) {
        let (a, b) = (parsed(&a), parsed(&b));
        let (diff, both) = (a.subtract(&b), a.intersection(&b));
        prop_assert!(diff.intersection(&b).is_empty());
        prop_assert_eq!(diff.union(&both), a.clone());
        prop_assert_eq!(&both, &b.intersection(&a));
        prop_assert_eq!(a.union(&b).count(), a.count() + b.count() - both.count());
        prop_assert_eq!(a.is_superset_of(&b), b.subtract(&a).is_empty());
        prop_assert!(a.is_superset_of(&both) && a.is_superset_of(&diff));
        prop_assert!(a.subtract(&a).is_empty());
    }

    #[test]
    fn operations_agree_with_model(a in entries(), b in entries()) {
        let (ma, mb) = (model(&a), model(&b));
        let (a, b) = (parsed(&a), parsed(&b));
        prop_assert_eq!(model_of(&a.union(&b)), ma.union(&mb).cloned().collect::<Model>());
        prop_assert_eq!(model_of(&a.intersection(&b)), ma.intersection(&mb).cloned().collect::<Model>());
        prop_assert_eq!(model_of(&a.subtract(&b)), ma.difference(&mb).cloned().collect::<Model>());
        prop_assert_eq!(a.is_superset_of(&b), ma.is_superset(&mb));
    }

    #[test]
    fn contains_agrees_with_model(
        e in entries(),
        probes in prop::collection::vec((0..UUIDS.len(), 0..TAGS.len(), 0_u64..50, any::<bool>()), 1..40),
    ) {
        let s = parsed(&e);
        let m = model(&e);
        for (u, t, gno, high) in probes {
            let gno = if high { MAX_GNO - gno } else { gno };
            // Tags as other code might build them by hand, in any case.
            let gtid = Gtid { uuid: uuid(UUIDS[u]), tag: TAGS[t].map(str::to_uppercase), gno };
            let key = (UUIDS[u].to_lowercase(), TAGS[t].map(str::to_lowercase), gno);
            prop_assert_eq!(s.contains(&gtid), m.contains(&key), "{}", gtid);
        }
    }

    #[test]
    fn adding_one_by_one_equals_parsing(e in entries()) {
        let mut grown = GtidSet::empty();
        for (u, tag, gno) in model(&e).into_iter().rev() {
            grown.add(&Gtid { uuid: uuid(&u), tag, gno });
        }
        prop_assert_eq!(grown, parsed(&e));
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = GtidSet::parse(&text);
        let _ = Gtid::parse(&text);
        let _ = ServerUuid::parse(&text);
        let _ = GtidList::parse(&text);
        let _ = DomainGtid::parse(&text);
    }

    #[test]
    fn near_miss_text_round_trips_or_fails_briefly(
        u in 0..UUIDS.len(),
        rest in "[0-9a-fA-FxZ:,_ \n\u{e9}-]{0,60}",
    ) {
        let text = format!("{}{rest}", UUIDS[u]);
        for candidate in [text.as_str(), rest.as_str()] {
            match GtidSet::parse(candidate) {
                Ok(s) => prop_assert_eq!(GtidSet::parse(&s.to_string()), Ok(s)),
                Err(e) => prop_assert!(e.to_string().chars().count() < 300),
            }
            if let Ok(l) = GtidList::parse(candidate) {
                prop_assert_eq!(GtidList::parse(&l.to_string()), Ok(l));
            }
        }
    }
}

// ---------------------------------------------------------------- MariaDB properties

fn maria_entries() -> impl Strategy<Value = Vec<(u32, u32, u64)>> {
    let domain = prop_oneof![5 => 0_u32..5, 1 => Just(u32::MAX)];
    let seq = prop_oneof![5 => 0_u64..1000, 1 => (u64::MAX - 3)..=u64::MAX];
    prop::collection::vec((domain, 0_u32..4, seq), 0..8)
}

fn maria_text(entries: &[(u32, u32, u64)], gap: &str) -> String {
    let parts: Vec<String> = entries
        .iter()
        .map(|(d, s, q)| format!("{d}{gap}-{s}-{gap}{q}"))
        .collect();
    parts.join(&format!("{gap},{gap}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mariadb_parse_keeps_highest_seq(e in maria_entries(), gap in "[ \t\r\n]{0,2}") {
        let mut expected: BTreeMap<u32, DomainGtid> = BTreeMap::new();
        for &(domain, server_id, seq) in &e {
            if expected.get(&domain).is_none_or(|kept| seq >= kept.seq) {
                expected.insert(domain, DomainGtid { domain, server_id, seq });
            }
        }
        let parsed = list(&maria_text(&e, &gap));
        prop_assert_eq!(parsed.iter().copied().collect::<Vec<_>>(), expected.into_values().collect::<Vec<_>>());
        prop_assert_eq!(list(&parsed.to_string()), parsed.clone());
        prop_assert_eq!(parsed.to_string().parse::<GtidList>(), Ok(parsed));
    }

    #[test]
    fn mariadb_distance_equals_seq_bumps(
        e in prop::collection::vec((0_u32..6, 0_u32..4, 0_u64..1000), 0..8),
        bumps in prop::collection::vec(0_u64..1000, 6),
    ) {
        let behind = list(&maria_text(&e, ""));
        prop_assert!(behind.distance_from(&behind).iter().all(|row| row.transactions == 0));
        prop_assert_eq!(behind.distance_from(&behind).len(), behind.len());
        prop_assert!(behind.ahead_of(&behind).is_empty());
        let mut ahead = behind.clone();
        for gtid in behind.iter() {
            let seq = gtid.seq + bumps[gtid.domain as usize];
            ahead.insert(DomainGtid { seq, ..*gtid });
        }
        for row in ahead.distance_from(&behind) {
            prop_assert_eq!(row.transactions, bumps[row.domain as usize]);
        }
        let total: u64 = behind.domains().map(|d| bumps[d as usize]).sum();
        prop_assert_eq!(ahead.total_distance(&behind), total);
        prop_assert!(behind.ahead_of(&ahead).is_empty());
        let bumped: Vec<u32> = behind.domains().filter(|&d| bumps[d as usize] > 0).collect();
        prop_assert_eq!(ahead.ahead_of(&behind).iter().map(|g| g.domain).collect::<Vec<_>>(), bumped);
    }

    #[test]
    fn mariadb_ahead_of_is_consistent_with_distance(a in maria_entries(), b in maria_entries()) {
        let (a, b) = (list(&maria_text(&a, "")), list(&maria_text(&b, "")));
        let errant: BTreeSet<u32> = a.ahead_of(&b).iter().map(|g| g.domain).collect();
        for row in a.distance_from(&b) {
            let in_a = row.ahead.is_some();
            let expected = in_a && (row.behind.is_none() || row.transactions > 0);
            prop_assert_eq!(errant.contains(&row.domain), expected, "{:?}", row);
            prop_assert_eq!(row.ahead, a.seq(row.domain));
            prop_assert_eq!(row.behind, b.seq(row.domain));
        }
        for gtid in a.iter() {
            prop_assert_eq!(b.contains(gtid), !errant.contains(&gtid.domain));
        }
    }
}
