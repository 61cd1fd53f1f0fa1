# wiped_status: the state of wiped jobs on a host, with one progress line per job, for a task that
# waits with until/retries/delay. An action plugin (it runs on the controller and asks the host with
# the command module) only so that its result is shown at every retry: Ansible prints a retry's
# result when it carries _ansible_verbose_always, which only an action plugin may set.
#
# Arguments: jobs (list of ids), wipectl, socket, deadline (UNIX time: past it, timed_out is true).
# Returns: jobs (job, node, state and error of each), progress (one line per job), ended (every job ended),
# timed_out.

import json
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

ENDED = ("done", "done-with-errors", "failed", "cancelled", "interrupted")


def human_rate(bps):
    if not bps:
        return "-"
    return "%.1f MB/s" % (bps / 1e6)


def human_eta(s):
    if s is None:
        return "-"
    s = int(s)
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


def line(job):
    total = job.get("work_total_bytes") or 0
    pct = 100.0 * (job.get("work_done_bytes") or 0) / total if total else 0.0
    where = ""
    if job.get("phase"):
        where = " %s %s/%s" % (job["phase"], job.get("pass"), job.get("passes"))
    text = "job %s %s: %s%s %.1f%% %s ETA %s" % (job["job"], job.get("node") or job.get("device"),
                                                  job["state"], where, pct, human_rate(job.get("rate_bps")),
                                                  human_eta(job.get("eta_s")))
    if job.get("error"):
        text += ": " + job["error"].get("message", "")
    return text


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("jobs", "wipectl", "socket", "deadline"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        jobs = [str(int(j)) for j in args.get("jobs") or []]
        argv = [args.get("wipectl") or "wipectl"]
        if args.get("socket"):
            argv += ["--socket", args["socket"]]
        argv += ["--json", "status"] + jobs
        result.update(changed=False, jobs=[], progress=[], ended=True, timed_out=False)
        if not jobs:
            return result
        res = self._execute_module(module_name="ansible.builtin.command",
                                   module_args={"argv": argv}, task_vars=task_vars)
        if res.get("rc") != 0:
            raise AnsibleActionFail("%s failed (exit %s): %s" % (" ".join(argv), res.get("rc"),
                                    (res.get("stderr") or res.get("msg") or "").strip()))
        try:
            status = json.loads(res["stdout"])["jobs"]
        except (ValueError, KeyError) as e:
            raise AnsibleActionFail("%s: unexpected output: %s" % (" ".join(argv), e))
        # Shown at every retry: only what the role reads; the progress lines say the rest.
        result["jobs"] = [{"job": j["job"], "node": j.get("node") or j.get("device"), "state": j["state"],
                           "error": j.get("error")} for j in status]
        result["progress"] = [line(j) for j in status]
        # An interrupted job that the daemon resumes by itself (a restart) has not ended: wait on,
        # as wipectl wait does.
        result["ended"] = all(j["state"] in ENDED and not (j["state"] == "interrupted" and j.get("resuming"))
                              for j in status)
        deadline = args.get("deadline")
        result["timed_out"] = not result["ended"] and deadline is not None and time.time() >= float(deadline)
        result["_ansible_verbose_always"] = True
        return result
