"""What `web_fetch` may reach (acp_server/tools/web_access.py): the URLs it accepts (strict, so
the host the user allows is the host fetched), the origin an "allow always" answer covers, and
the `[web_fetch]` table. The addresses it refuses, through the tool:
tests/tools/builtin/test_web_hostile.py and tests/tools/builtin/test_web.py; the policy's
"allow always" per host: tests/tools/test_web_fetch_policy.py."""

from __future__ import annotations

from typing import Any

import pytest

from acp_server.tools.web_access import (
    UrlRefused,
    WebFetchSettings,
    WebUrl,
    fetch_origin,
    non_public,
    parse_url,
    web_fetch_settings,
)


@pytest.mark.parametrize(
    ("url", "scheme", "host", "port", "origin"),
    [
        ("https://Docs.Example.com/a?b#c", "https", "docs.example.com", None, "docs.example.com"),
        ("http://example.com:80/", "http", "example.com", None, "example.com"),
        ("http://example.com:8080/x", "http", "example.com", 8080, "example.com:8080"),
        ("https://example.com./", "https", "example.com", None, "example.com"),
        ("https://[::1]:8443/", "https", "::1", 8443, "[::1]:8443"),
        ("https://bücher.de/", "https", "xn--bcher-kva.de", None, "xn--bcher-kva.de"),
    ],
)
def test_an_accepted_url_names_its_host_and_the_origin_an_answer_covers(
    url: str, scheme: str, host: str, port: int | None, origin: str
) -> None:
    parsed = parse_url(url)
    assert parsed == WebUrl(url, scheme, host, port)
    assert parsed.origin == origin == fetch_origin(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("", "empty or longer than 8192"),
        ("https://example.com/" + "a" * 8192, "empty or longer than 8192"),
        ("https://example.com/a b", "spaces, backslashes or control characters"),
        ("https://example.com\\@evil.com/", "spaces, backslashes or control characters"),
        ("https://example.com/\x7f", "spaces, backslashes or control characters"),
        ("ftp://example.com/", "only http and https URLs are fetched, not 'ftp'"),
        ("example.com/page", "only http and https URLs are fetched, not 'this'"),
        ("https://user:pw@example.com/", "user name or password"),
        ("https:///path", "the URL has no host"),
        ("https://example.com:99999/", "cannot be parsed"),
    ],
)
def test_anything_else_is_refused_saying_why(url: str, why: str) -> None:
    with pytest.raises(UrlRefused) as refused:
        parse_url(url)
    assert why in str(refused.value)
    assert fetch_origin(url) is None


def test_a_host_label_too_long_for_dns_is_refused_before_it_is_encoded() -> None:
    """Python's IDNA codec encodes a label before checking its length, in time quadratic in it
    (a label of 8,000 characters took 11 s); such a label is refused without encoding it, while
    one that nameprep shortens to 63 characters (soft hyphens are dropped) is still read."""
    with pytest.raises(UrlRefused) as refused:
        parse_url("https://" + "\u4e00\u4e8c" * 4000 + ".example/")
    assert "a label of it is longer than 63 characters" in str(refused.value)
    assert parse_url("https://" + "a\u00ad" * 40 + "\u00e9.de/").host == (
        "xn--" + "a" * 40 + "-ftd.de"
    )


def test_a_url_argument_that_is_not_a_string_has_no_origin() -> None:
    assert fetch_origin(["https://example.com"]) is None


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "127.0.0.1, a loopback"),
        ("10.1.2.3", "10.1.2.3, a private"),
        ("169.254.169.254", "169.254.169.254, a private, link-local or reserved"),
        ("::1", "::1, a loopback"),
        ("::ffff:192.168.0.1", "an IPv4-mapped address of 192.168.0.1, a private"),
        ("fe80::1%eth0", "fe80::1, a private, link-local or reserved"),
        ("fec0::1", "fec0::1, a site-local address"),
        ("feff::1", "feff::1, a site-local address"),
        (
            "64:ff9b:1::808:808",  # local-use NAT64: each prefix length puts the address elsewhere
            "64:ff9b:1::808:808, a local-use NAT64 address of 0.0.0.0 (/48), 0.0.0.0 (/56), "
            "0.0.0.8 (/64) or 8.8.8.8 (/96), by the network's prefix length; 0.0.0.0 is a "
            "private, link-local or reserved address",
        ),
        ("not-an-ip", "not-an-ip, which is not an IP address"),
    ],
)
def test_non_public_addresses_say_what_they_are(address: str, why: str) -> None:
    assert why in (non_public(address) or "")


def error(problem: str, key: str | None, table: str | None) -> Exception:
    return ValueError(problem)


def test_the_table_sets_each_key_and_defaults_the_rest() -> None:
    assert web_fetch_settings({}, error) == WebFetchSettings()
    settings = web_fetch_settings(
        {"max_bytes": 1000, "timeout": 5, "max_redirects": 0, "allow_private_addresses": True},
        error,
    )
    assert settings == WebFetchSettings(1000, 5.0, 0, True)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ([], "[web_fetch] must be a table"),
        ({"max_bytes": 0}, "`max_bytes` must be above 0"),
        ({"max_redirects": -1}, "`max_redirects` must be a whole number (0 or more)"),
        ({"max_bytes": True}, "`max_bytes` must be a whole number (0 or more)"),
        ({"timeout": 0}, "`timeout` must be a number of seconds above 0"),
        ({"allow_private_addresses": "yes"}, "`allow_private_addresses` must be true or false"),
        ({"proxy": "x"}, "unknown key `proxy` in [web_fetch]"),
    ],
)
def test_a_bad_table_is_refused_naming_the_key(entry: Any, problem: str) -> None:
    with pytest.raises(ValueError) as refused:
        web_fetch_settings(entry, error)
    assert problem in str(refused.value)
