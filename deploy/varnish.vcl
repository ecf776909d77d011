#
# Varnish in front of jobsnap (Debian's varnish 7.1 and varnish-modules;
# tested by test/refresh/varnish.test.ts). Run it with
#   varnishd -a :80 -f /etc/varnish/jobsnap.vcl -s malloc,1g
# and jobsnap behind it with
#   JOBSNAP_CDN_TTL=86400 JOBSNAP_TRUST_PROXY=127.0.0.1 jobsnap serve --port 3000
# then `jobsnap purge --varnish http://127.0.0.1` after every build.
#
# What it does:
# - Lifetime: the shared one jobsnap sends (CDN-Cache-Control, else
#   Surrogate-Control: max-age, stale-while-revalidate, stale-if-error), read
#   here because Varnish itself takes its TTL from Cache-Control and reads
#   Surrogate-Control only for ESI and no-store. Without either header the
#   browser's Cache-Control max-age (60 s) is the lifetime, with no
#   revalidation window and a day of stale-if-error.
# - Stale: within stale-while-revalidate a stale copy is answered at once
#   and refreshed in the background; past it, while jobsnap is healthy, it is
#   fetched anew before answering. While jobsnap is down (the probe on /ready
#   fails) or answers 5xx, a copy within stale-if-error is answered instead.
# - Purge: `PURGE /` with `xkey: <tag> <tag> ...` (or `xkey-softpurge`)
#   from an address in the `purgers` ACL removes every object carrying any of
#   those tags (jobsnap's `xkey` response header).
# - Compression: Varnish asks jobsnap for gzip, stores that, and gunzips for
#   clients that do not accept it, so a URL has at most two variants (gzip
#   and identity requests); brotli is not offered through this front.
# - Limits at the edge (vsthrottle, per client address): REST (/api/v1,
#   /api/v2, /feeds) 60 a minute together, MCP (/api/mcp) a burst of 60
#   refilled 5 a second. Both are token buckets: the REST one refills one
#   request a second rather than a rolling window's all at once.
# - Per-client headers: X-RateLimit-*, RateLimit(-Policy) and X-Request-Id are
#   removed from what jobsnap answers before it is stored, and set by this
#   front on every answer. X-Cache is the edge's (HIT, MISS, BYPASS);
#   jobsnap's own is kept as X-Origin-Cache.
# - Cache tags and shared lifetimes (Surrogate-Key, Cache-Tag, xkey,
#   CDN-Cache-Control, Surrogate-Control) are not shown to clients.
# - Errors made here (403, 405, 429, 503 with nothing cached) are the API's
#   JSON error body with Cache-Control: no-store.
#
# The client is the TCP peer (client.ip). Behind another proxy or load
# balancer, use the PROXY protocol (`-a :80,PROXY`) so client.ip is the
# real client; X-Forwarded-For is never read here.
#
# To change for a deployment: the backend's address (one line below), the
# `purgers` ACL.

vcl 4.1;

import std;
import vsthrottle;
import xkey;

backend jobsnap {
    .host = "127.0.0.1:3000";
    .connect_timeout = 1s;
    .first_byte_timeout = 15s;
    .between_bytes_timeout = 10s;
    .probe = {
        .url = "/ready";
        .expected_response = 200;
        .interval = 1s;
        .timeout = 1s;
        .window = 3;
        .threshold = 2;
        .initial = 2;
    }
}

# Who may PURGE.
acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.restarts == 0) {
        # Internal flags: never from a client.
        unset req.http.X-Edge-Refresh;
        unset req.http.X-Edge-Stale;
        unset req.http.X-Edge-Cache;
        unset req.http.X-Edge-Limit;
        # A plain token the client sent is its request id (jobsnap's rule); otherwise one is made here.
        if (req.http.X-Request-Id !~ "^[A-Za-z0-9_.:@/+=-]{1,128}$") {
            set req.http.X-Request-Id = "edge-" + std.integer(time = now) + "-" + req.xid;
        }
        # An absolute-form target names the same resource as its path.
        if (req.url ~ "^(?i)https?://") {
            set req.url = regsub(req.url, "^(?i)https?://[^/?]*", "");
            if (req.url !~ "^/") {
                set req.url = "/" + req.url;
            }
        }
    }

    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "PURGE is accepted only from the addresses this cache's purge list names."));
        }
        if (req.http.xkey) {
            set req.http.X-Edge-Purged = xkey.purge(req.http.xkey);
        } else if (req.http.xkey-softpurge) {
            set req.http.X-Edge-Purged = xkey.softpurge(req.http.xkey-softpurge);
        } else {
            return (synth(400, "PURGE needs an xkey (or xkey-softpurge) header naming the tags to purge, space-separated."));
        }
        return (synth(200, "Purged"));
    }

    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST" && req.method != "OPTIONS" &&
        req.method != "PUT" && req.method != "DELETE" && req.method != "PATCH") {
        return (synth(405, "Method " + req.method + " is not allowed; this API is read-only (GET, HEAD)."));
    }

    # The edge's rate limits. Token buckets per client address: REST 60 (refilled 1/s), MCP 60 (refilled 5/s).
    if (req.restarts == 0 && req.method != "OPTIONS") {
        if (req.url ~ "^/(api/v[12]|feeds)([/?]|$)") {
            set req.http.X-Edge-Limit = "rest";
            if (vsthrottle.is_denied("rest:" + client.ip, 60, 60s)) {
                return (synth(429, "Rate limit exceeded: 60 requests per minute per client across v1 and v2. Retry in 1 s."));
            }
        } else if (req.url ~ "^/api/mcp([/?]|$)") {
            set req.http.X-Edge-Limit = "mcp";
            if (vsthrottle.is_denied("mcp:" + client.ip, 60, 12s)) {
                return (synth(429, "Rate limit exceeded: burst 60, refilled at 5 per second. Retry in 1 s."));
            }
        }
    } else if (req.method == "OPTIONS") {
        if (req.url ~ "^/(api/v[12]|feeds)([/?]|$)") {
            set req.http.X-Edge-Limit = "rest";
        } else if (req.url ~ "^/api/mcp([/?]|$)") {
            set req.http.X-Edge-Limit = "mcp";
        }
    }

    # MCP: never cached. jobsnap on loopback accepts only a loopback Host (DNS rebinding defence).
    if (req.url ~ "^/api/mcp([/?]|$)") {
        set req.http.Host = "localhost";
        return (pass);
    }

    # /metrics is for the operator's scraper on the jobsnap port: through the edge every client is this peer.
    if (req.url ~ "^/metrics([/?]|$)") {
        return (synth(404, "No endpoint at /metrics. See /openapi.yaml or /docs."));
    }

    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }

    # One spelling of what the client accepts, so Vary: Accept-Encoding keeps two variants: gzip or not
    # (Varnish itself asks jobsnap for gzip and gunzips for the others; it does not handle brotli).
    if (req.http.Accept-Encoding ~ "(?i)(^|,)\s*gzip\s*(,|$|;\s*q=(1|0\.0*[1-9]))") {
        set req.http.Accept-Encoding = "gzip";
    } else {
        unset req.http.Accept-Encoding;
    }

    # jobsnap answers the same whatever cookies or credentials come with a request.
    unset req.http.Cookie;
    unset req.http.Authorization;

    if (req.http.X-Edge-Refresh) {
        # Stale past stale-while-revalidate and jobsnap healthy: a miss, fetched now (the stale copy stays,
        # for revalidation and stale-if-error).
        set req.grace = 0s;
    } else {
        # The object's own grace (stale-if-error) applies; this also undoes a failed refresh's 0 s when the
        # request is restarted to be answered from the stale copy.
        set req.grace = 3650d;
    }
    return (hash);
}

sub vcl_hit {
    if (req.http.X-Edge-Refresh || req.http.X-Edge-Stale) {
        set req.http.X-Edge-Cache = "HIT";
        return (deliver);
    }
    if (obj.ttl <= 0s && obj.ttl + std.duration(obj.http.X-Edge-Swr + "s", 0s) <= 0s &&
        std.healthy(req.backend_hint)) {
        set req.http.X-Edge-Refresh = "1";
        return (restart);
    }
    set req.http.X-Edge-Cache = "HIT";
    return (deliver);
}

sub vcl_miss {
    set req.http.X-Edge-Cache = "MISS";
}

sub vcl_pass {
    set req.http.X-Edge-Cache = "BYPASS";
}

sub vcl_backend_fetch {
    unset bereq.http.X-Edge-Cache;
    unset bereq.http.X-Edge-Limit;
    unset bereq.http.X-Edge-Stale;
}

sub vcl_backend_response {
    # A stale copy is better than an origin error: keep it (the client is answered from it).
    if (beresp.status >= 500 && (bereq.is_bgfetch || bereq.http.X-Edge-Refresh)) {
        return (abandon);
    }

    # Per-client values are the edge's to set, never stored for the next client.
    unset beresp.http.X-RateLimit-Limit;
    unset beresp.http.X-RateLimit-Remaining;
    unset beresp.http.X-RateLimit-Reset;
    unset beresp.http.RateLimit;
    unset beresp.http.RateLimit-Policy;
    unset beresp.http.X-Request-Id;
    if (beresp.http.X-Cache) {
        set beresp.http.X-Origin-Cache = beresp.http.X-Cache;
        unset beresp.http.X-Cache;
    }

    # The shared lifetime: CDN-Cache-Control (RFC 9213) first, else Surrogate-Control.
    if (beresp.http.CDN-Cache-Control) {
        set beresp.http.X-Edge-Lifetime = beresp.http.CDN-Cache-Control;
    } else if (beresp.http.Surrogate-Control) {
        set beresp.http.X-Edge-Lifetime = beresp.http.Surrogate-Control;
    }
    if (beresp.http.X-Edge-Lifetime ~ "(?i)no-store|private") {
        set beresp.ttl = 0s;
    } else if (beresp.http.X-Edge-Lifetime ~ "(?i)(^|[\s,])max-age=\d+") {
        set beresp.ttl = std.duration(
            regsub(beresp.http.X-Edge-Lifetime, "(?i)^(.*[\s,])?max-age=(\d+).*$", "\2") + "s", 0s);
        set beresp.http.X-Edge-Swr = "0";
        if (beresp.http.X-Edge-Lifetime ~ "(?i)stale-while-revalidate=\d+") {
            set beresp.http.X-Edge-Swr =
                regsub(beresp.http.X-Edge-Lifetime, "(?i)^.*stale-while-revalidate=(\d+).*$", "\1");
        }
        set beresp.grace = std.duration(beresp.http.X-Edge-Swr + "s", 0s);
        if (beresp.http.X-Edge-Lifetime ~ "(?i)stale-if-error=\d+") {
            set beresp.grace = std.duration(
                regsub(beresp.http.X-Edge-Lifetime, "(?i)^.*stale-if-error=(\d+).*$", "\1") + "s", 0s);
            if (beresp.grace < std.duration(beresp.http.X-Edge-Swr + "s", 0s)) {
                set beresp.grace = std.duration(beresp.http.X-Edge-Swr + "s", 0s);
            }
        }
    } else if (beresp.http.Cache-Control !~ "(?i)no-store|no-cache|private") {
        # No shared lifetime: the browser's (Cache-Control, as Varnish read it), a day of stale-if-error.
        set beresp.http.X-Edge-Swr = "0";
        set beresp.grace = 1d;
    }
    unset beresp.http.X-Edge-Lifetime;
}

sub vcl_backend_error {
    # Answered by vcl_synth (the JSON error, or a stale copy).
    return (abandon);
}

sub vcl_deliver {
    unset resp.http.Surrogate-Key;
    unset resp.http.Cache-Tag;
    unset resp.http.xkey;
    unset resp.http.CDN-Cache-Control;
    unset resp.http.Surrogate-Control;
    unset resp.http.X-Edge-Swr;
    unset resp.http.X-Varnish;
    # Browsers get the seed's max-age=60 counted from now: an Age of how long the edge has held the object
    # (hours, with a long shared lifetime and a purge on change) would make every copy stale on arrival.
    unset resp.http.Age;
    # A passed answer (MCP, other methods) still came from jobsnap with its own: the edge's replace them.
    unset resp.http.X-RateLimit-Limit;
    unset resp.http.X-RateLimit-Remaining;
    unset resp.http.X-RateLimit-Reset;
    unset resp.http.RateLimit;
    unset resp.http.RateLimit-Policy;
    set resp.http.X-Cache = req.http.X-Edge-Cache;
    set resp.http.X-Request-Id = req.http.X-Request-Id;
    call edge_limit_headers;
}

sub vcl_synth {
    if (resp.status == 503 && req.http.X-Edge-Refresh && !req.http.X-Edge-Stale) {
        # The refresh failed: answer the stale copy within stale-if-error.
        unset req.http.X-Edge-Refresh;
        set req.http.X-Edge-Stale = "1";
        return (restart);
    }
    unset resp.http.Server;
    unset resp.http.X-Varnish;
    set resp.http.Content-Type = "application/json; charset=utf-8";
    set resp.http.Cache-Control = "no-store";
    set resp.http.X-Content-Type-Options = "nosniff";
    set resp.http.Access-Control-Allow-Origin = "*";
    set resp.http.X-Cache = "BYPASS";
    set resp.http.X-Request-Id = req.http.X-Request-Id;
    if (resp.status == 200 && req.method == "PURGE") {
        set resp.body = {"{"purged":"} + req.http.X-Edge-Purged + "}";
        return (deliver);
    }
    if (resp.status == 503) {
        set resp.reason = "Service Unavailable";
        set resp.http.Retry-After = "5";
        set resp.body = {"{"error":{"code":503,"message":"The API is not answering and this URL is not in the cache; retry shortly."} + {"""} + "}}";
        return (deliver);
    }
    set resp.http.Access-Control-Expose-Headers = "ETag, X-API-Version, X-Cache, X-Snapshot-Id, X-Ignored-Parameters, X-Oldest-Snapshot-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id";
    if (resp.status == 400 && !req.http.Host) {
        set resp.reason = "Request must have a Host header.";
    }
    # The messages written here contain no quote or backslash, so they go into the JSON as they are.
    set resp.body = {"{"error":{"code":"} + resp.status + {","message":""} + resp.reason + {"""} + "}}";
    if (resp.status == 429) {
        set resp.reason = "Too Many Requests";
        set resp.http.Retry-After = "1";
        if (req.http.X-Edge-Limit == "rest") {
            if (req.url ~ "^/api/v1") {
                set resp.http.X-API-Version = "v1";
            } else {
                set resp.http.X-API-Version = "v2";
            }
        }
        call edge_limit_headers;
    } else if (resp.status == 405) {
        set resp.reason = "Method Not Allowed";
        set resp.http.Allow = "GET, HEAD, OPTIONS";
    } else if (resp.status == 403) {
        set resp.reason = "Forbidden";
    } else if (resp.status == 404) {
        set resp.reason = "Not Found";
    } else if (resp.status == 400) {
        set resp.reason = "Bad Request";
    }
    return (deliver);
}

# X-RateLimit-* and RateLimit(-Policy) from the edge's buckets; Retry-After, when a request is refused, is 1 s
# (a token comes back every second for REST, every 0.2 s for MCP).
sub edge_limit_headers {
    if (req.http.X-Edge-Limit == "rest") {
        set resp.http.X-RateLimit-Limit = "60";
        set resp.http.X-RateLimit-Remaining = vsthrottle.remaining("rest:" + client.ip, 60, 60s);
        set resp.http.RateLimit-Policy = {""rest";q=60;w=60"};
    } else if (req.http.X-Edge-Limit == "mcp") {
        set resp.http.X-RateLimit-Limit = "60";
        set resp.http.X-RateLimit-Remaining = vsthrottle.remaining("mcp:" + client.ip, 60, 12s);
        set resp.http.RateLimit-Policy = {""mcp";q=60;w=12"};
    } else {
        return;
    }
    if (std.integer(resp.http.X-RateLimit-Remaining, 0) < 60) {
        set resp.http.X-RateLimit-Reset = "1";
    } else {
        set resp.http.X-RateLimit-Reset = "0";
    }
    set resp.http.RateLimit = {"""} + req.http.X-Edge-Limit + {"";r="} + resp.http.X-RateLimit-Remaining +
        ";t=" + resp.http.X-RateLimit-Reset;
}
