use super::*;

#[test]
fn schedules_robfig_standard_parser_accepts_are_accepted() {
    let accepted = [
        "0 0 * * 0",
        "0 * * * *",
        "0 0 1 * *",
        "*/15 * * * *",
        "5/10 * * * *",
        "0-30/5 8-17 * * 1-5",
        "0,15,30,45 * * * *",
        "0 0 1,15 jan-jun,DEC *",
        "0 0 ? * SUN-sat",
        "0 0 * * mon,wed,fri",
        "0\t0  * *   0",
        "59 23 31 12 6",
        "*-5 * * * *",
        "+5 * * * *",
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
        "@every 1h30m",
        "@every 90s",
        "@every 1.5h",
        "@every 0",
        "@every 500ms",
    ];
    for spec in accepted {
        assert_eq!(check(spec), Ok(()), "{spec:?}");
    }
}

#[test]
fn schedules_robfig_standard_parser_refuses_are_refused_with_its_message() {
    let table: &[(&str, Option<&str>)] = &[
        ("0 0 * * 0", None),
        ("", Some("empty spec string")),
        ("   ", Some("expected exactly 5 fields, found 0: []")),
        (
            "0 0 * *",
            Some("expected exactly 5 fields, found 4: [0 0 * *]"),
        ),
        (
            "0 0 0 * * *",
            Some("expected exactly 5 fields, found 6: [0 0 0 * * *]"),
        ),
        (
            "60 * * * *",
            Some("end of range (60) above maximum (59): 60"),
        ),
        (
            "* 24 * * *",
            Some("end of range (24) above maximum (23): 24"),
        ),
        (
            "* * 0 * *",
            Some("beginning of range (0) below minimum (1): 0"),
        ),
        (
            "* * 32 * *",
            Some("end of range (32) above maximum (31): 32"),
        ),
        (
            "* * * 13 *",
            Some("end of range (13) above maximum (12): 13"),
        ),
        ("* * * * 7", Some("end of range (7) above maximum (6): 7")),
        (
            "30-10 * * * *",
            Some("beginning of range (30) beyond end of range (10): 30-10"),
        ),
        (
            "*/0 * * * *",
            Some("step of range should be a positive number: */0"),
        ),
        ("1-2-3 * * * *", Some("too many hyphens: 1-2-3")),
        ("*/2/3 * * * *", Some("too many slashes: */2/3")),
        ("*/-1 * * * *", Some("negative number (-1) not allowed: -1")),
        (
            "x * * * *",
            Some("failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"),
        ),
        (
            "1,,2 * * * *",
            Some("failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax"),
        ),
        (
            "* * * * sunday",
            Some(
                "failed to parse int from sunday: strconv.Atoi: parsing \"sunday\": invalid syntax",
            ),
        ),
        (
            "* * * jan-foo *",
            Some("failed to parse int from foo: strconv.Atoi: parsing \"foo\": invalid syntax"),
        ),
        (
            "99999999999999999999 * * * *",
            Some(
                "failed to parse int from 99999999999999999999: strconv.Atoi: parsing \
                 \"99999999999999999999\": value out of range",
            ),
        ),
        ("@Hourly", Some("unrecognized descriptor: @Hourly")),
        ("@reboot", Some("unrecognized descriptor: @reboot")),
        ("@hourly ", Some("unrecognized descriptor: @hourly ")),
        (
            "@every 1d",
            Some("failed to parse duration @every 1d: time: unknown unit \"d\" in duration \"1d\""),
        ),
        (
            "@every 10",
            Some("failed to parse duration @every 10: time: missing unit in duration \"10\""),
        ),
        (
            "@every ",
            Some("failed to parse duration @every : time: invalid duration \"\""),
        ),
        (
            "@every h",
            Some("failed to parse duration @every h: time: invalid duration \"h\""),
        ),
        (
            "TZ=UTC 0 0 * * 0",
            Some("cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        ),
        (
            "CRON_TZ=Europe/Berlin 0 0 * * 0",
            Some("cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        ),
    ];
    for (spec, expected) in table {
        let got = check(spec).err().map(|e| e.to_string());
        assert_eq!(got.as_deref(), *expected, "{spec:?}");
    }
}
