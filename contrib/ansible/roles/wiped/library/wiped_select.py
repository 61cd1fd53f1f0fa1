#!/usr/bin/python3
# wiped_select: which block devices of this host a wipe would take, from the daemon's own list
# (wipectl --json devices) and the patterns the play gives. Read-only: it lists, resolves links and
# reads the daemon's job table; it never writes and never submits (check mode is the same run).
#
# The daemon decides what is wipeable; this module only narrows that down to what the patterns
# name. A device no pattern matches is never taken, and an empty pattern list takes nothing.

DOCUMENTATION = r"""
module: wiped_select
short_description: Select the devices to wipe with wiped, by patterns, among those wiped lists
description:
  - Runs C(wipectl --json devices) and C(wipectl --json list --all) on the host and returns the
    disks and partitions that a pattern of I(patterns) matches, split into those to submit, those
    a job is already running on (to be waited for), those an earlier job already wiped (skipped
    unless I(rewipe)), and those the daemon refuses (with its reason).
  - A pattern that starts with C(/) is a glob over the device node and every link to it under
    C(/dev/disk/) (by-id, by-path, ...), matched as fnmatch(3) with FNM_PATHNAME (C(*) does not
    cross C(/)), as wiped.conf's allow and deny are. C(serial:GLOB) and C(model:GLOB) match the
    device's serial number and model.
options:
  patterns: {type: list, elements: str, required: true}
  wipectl: {type: str, default: wipectl}
  socket: {type: str}
  rewipe: {type: bool, default: false}
  expect:
    description:
      - The I(submit) list of an earlier run. The devices are selected again and the module fails
        unless each of them is still to be submitted and has the identity it had then (size,
        serial, model, backing file): run it right before the submit, so that a drive that took a
        selected node in the meantime (a hot-swap bay) is never wiped.
    type: list
    elements: dict
"""

import fnmatch
import json
import os

from ansible.module_utils.basic import AnsibleModule

RUNNING = ("running", "flushing")


def path_match(pattern, path):
    # fnmatch(3) with FNM_PATHNAME: the same number of components, each matched on its own.
    p = pattern.split("/")
    s = path.split("/")
    return len(p) == len(s) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(s, p))


def links_by_node():
    links = {}
    for root, _dirs, files in os.walk("/dev/disk"):
        for f in files:
            link = os.path.join(root, f)
            if os.path.islink(link):
                links.setdefault(os.path.realpath(link), []).append(link)
    return links


def matches(pattern, dev, names):
    if pattern.startswith("serial:"):
        return dev.get("serial") is not None and fnmatch.fnmatchcase(dev["serial"], pattern[7:])
    if pattern.startswith("model:"):
        return dev.get("model") is not None and fnmatch.fnmatchcase(dev["model"], pattern[6:])
    return any(path_match(pattern, n) for n in names)


def same_device(dev, job):
    # The identity the job recorded against what the device is now: enough to tell another
    # drive (or another backing file) that took the same node.
    ident = job.get("identity") or {}
    loop = ident.get("loop") or {}
    return (ident.get("size") == dev.get("size_bytes") and ident.get("serial") == dev.get("serial")
            and ident.get("model") == dev.get("model")
            and loop.get("backing_file") == dev.get("backing_file"))


def main():
    module = AnsibleModule(argument_spec=dict(
        patterns=dict(type="list", elements="str", required=True),
        wipectl=dict(type="str", default="wipectl"),
        socket=dict(type="str"),
        rewipe=dict(type="bool", default=False),
        expect=dict(type="list", elements="dict"),
        probe_file=dict(type="path"),
    ), supports_check_mode=True)
    patterns = [p for p in module.params["patterns"] if p]
    if len(patterns) != len(module.params["patterns"]):
        module.fail_json(msg="wiped_devices holds an empty pattern")
    for p in patterns:
        if not (p.startswith("/") or p.startswith("serial:") or p.startswith("model:")):
            module.fail_json(msg="wiped_devices: %r: a pattern is a path glob (starting with /), "
                                 "serial:GLOB or model:GLOB" % p)

    base = [module.params["wipectl"]]
    if module.params["socket"]:
        base += ["--socket", module.params["socket"]]

    def wipectl(*args):
        rc, out, err = module.run_command(base + ["--json"] + list(args))
        if rc != 0:
            module.fail_json(msg="%s %s failed (exit %d): %s" % (" ".join(base), " ".join(args), rc,
                                                                 err.strip() or out.strip()))
        return json.loads(out)

    result = dict(changed=False, submit=[], adopt=[], done=[], refused=[], unmatched_patterns=[])
    if not patterns:
        module.exit_json(**result)

    devices = wipectl("devices")["devices"]
    jobs = wipectl("list", "--all")["jobs"]
    links = links_by_node()

    chosen = []
    used = set()
    for disk in devices:
        for dev in [disk] + (disk.get("partitions") or []):
            names = [dev["node"]] + sorted(links.get(dev["node"], []))
            hit = [p for p in patterns if matches(p, dev, names)]
            if not hit:
                continue
            used.update(hit)
            chosen.append(dict(node=dev["node"], name=dev.get("name"), type=dev.get("type"),
                               disk=disk["node"], links=names[1:], serial=dev.get("serial"),
                               model=dev.get("model"), size_bytes=dev.get("size_bytes"),
                               backing_file=dev.get("backing_file"), patterns=hit,
                               wipeable=dev.get("wipeable"), refusal=dev.get("refusal"),
                               _dev=dev))
    # A partition of a disk that is taken whole goes with it (a glob over by-id names matches
    # both a disk's link and its -partN links).
    whole = {c["node"] for c in chosen if c["type"] != "part"}
    chosen = [c for c in chosen if c["type"] != "part" or c["disk"] not in whole]

    for c in chosen:
        dev = c.pop("_dev")
        mine = sorted((j for j in jobs if j.get("node") == c["node"]), key=lambda j: j["job"])
        latest = mine[-1] if mine else None
        # A job running on it (or interrupted by a restart, which the daemon resumes) is waited
        # for, not submitted again.
        if (latest and same_device(dev, latest)
                and (latest["state"] in RUNNING or (latest["state"] == "interrupted" and latest.get("resuming")))):
            c["job"] = latest["job"]
            result["adopt"].append(c)
        elif not c["wipeable"]:
            c["reason"] = (c.get("refusal") or {}).get("message") or "not wipeable"
            result["refused"].append(c)
        elif (latest and latest["state"] == "done" and not latest.get("superseded_by")
              and same_device(dev, latest) and not module.params["rewipe"]):
            c["job"] = latest["job"]
            result["done"].append(c)
        else:
            result["submit"].append(c)
    result["unmatched_patterns"] = [p for p in patterns if p not in used]
    if module.params["expect"] is not None:
        check_expected(module, module.params["expect"], result["submit"])
        if module.params["probe_file"]:
            write_probe(module, wipectl, module.params["expect"], module.params["probe_file"])
    module.exit_json(**result)


IDENTITY = ("size_bytes", "serial", "model", "backing_file")


def check_expected(module, expect, submit):
    # Every device selected earlier must still be one to submit, and the same device.
    now = {c["node"]: c for c in submit}
    changed = []
    for e in expect:
        c = now.get(e.get("node"))
        if c is None:
            changed.append("%s: no longer the device that was selected: not one to wipe now" % e.get("node"))
            continue
        diff = ["%s %r, was %r" % (k, c.get(k), e.get(k)) for k in IDENTITY if c.get(k) != e.get(k)]
        if diff:
            changed.append("%s: no longer the device that was selected: %s" % (e["node"], ", ".join(diff)))
    if changed:
        module.fail_json(msg="refusing to wipe: " + "; ".join(changed) + "; nothing was submitted")


def write_probe(module, wipectl, expect, path):
    # The identities the daemon sees now, checked once more, into the file that
    # `wipectl wipe --yes --expect FILE` submits with: the daemon then refuses a device that is
    # no longer this one when the submit reaches it (no window left between check and write).
    nodes = [e["node"] for e in expect]
    probe = wipectl("probe", *nodes)
    devs = probe.get("devices") or []
    if len(devs) != len(nodes):
        module.fail_json(msg="refusing to wipe: wipectl probe answered for %d devices, not %d; nothing was submitted"
                             % (len(devs), len(nodes)))
    changed = []
    for e, d in zip(expect, devs):
        ident = dict(d.get("identity") or {})
        ident["backing_file"] = (ident.get("loop") or {}).get("backing_file")
        diff = ["%s %r, was %r" % (k, ident.get(k), e.get(k)) for k in IDENTITY if ident.get(k) != e.get(k)]
        if d.get("path") != e["node"] or diff:
            changed.append("%s: no longer the device that was selected: %s" % (e["node"], ", ".join(diff) or "another path"))
    if changed:
        module.fail_json(msg="refusing to wipe: " + "; ".join(changed) + "; nothing was submitted")
    with open(path, "w") as f:
        json.dump(probe, f)


if __name__ == "__main__":
    main()
