CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
INSERT INTO "session" VALUES ('ses_db42fc4f5ffe4W48B3XY0C2fUW', 'global', NULL, NULL, 'crisp-squid', '/work/interop/project', 'tmp/ctxfold-opencode.rYSPtqDA/compaction-tail/project', 'New session - 2026-12-06T14:44:27.531Z', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0, 931607, 52, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'build', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796568267531, 1796568354345, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bd04085001EugN2gdy0PUZtw', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568268933, 1796568287583, '{"role":"user","time":{"created":1796568268933},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd05d31001YZJI2VbgXFgEj0', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568276273, 1796568286546, '{"parentID":"msg_24bd04085001EugN2gdy0PUZtw","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7699,"input":7690,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568276273,"completed":1796568286523},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24bd08587001pM0lbcTOnc9KRg', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568286599, 1796568288745, '{"parentID":"msg_24bd04085001EugN2gdy0PUZtw","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7754,"input":7746,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568286599,"completed":1796568288740},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bd0e82d001c2XATqSOYgKbb9', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568311853, 1796568321203, '{"role":"user","time":{"created":1796568311853},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd0fed1001icfGBE4pmUK3mr', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568317649, 1796568319529, '{"parentID":"msg_24bd0e82d001c2XATqSOYgKbb9","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568317649,"completed":1796568319527},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bd1062b001h6yGblkjvJxNuS', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568319531, 1796568321770, '{"role":"user","model":{"providerID":"fake","modelID":"fake-model"},"agent":"build","time":{"created":1796568319531},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd10671001RUcn6yZqV1oVZ5', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568319601, 1796568321547, '{"role":"assistant","parentID":"msg_24bd1062b001h6yGblkjvJxNuS","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":618,"input":586,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568319601,"completed":1796568321546},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bd10e2b001L1M0R0OqY47tLj', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568321579, 1796568321597, '{"role":"user","time":{"created":1796568321579},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}');
INSERT INTO "message" VALUES ('msg_24bd10e82001kSM0xPQ3GlTRKB', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568321666, 1796568325765, '{"parentID":"msg_24bd10e2b001L1M0R0OqY47tLj","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7783,"input":7782,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568321666,"completed":1796568325725},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bd15be0001r6BbJsGj0OgkJD', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568341472, 1796568348286, '{"role":"user","time":{"created":1796568341472},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd1747f001p6yERPJu3FjEye', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568347775, 1796568354088, '{"parentID":"msg_24bd15be0001r6BbJsGj0OgkJD","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7804,"input":7803,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568347775,"completed":1796568354076},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bd040d4001Zv7XbH76Z3iVuj', 'msg_24bd04085001EugN2gdy0PUZtw', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568276256, 1796568276258, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24bd06571001hjcrw0uJ1oCxSS', 'msg_24bd05d31001YZJI2VbgXFgEj0', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568278385, 1796568278388, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bd06576001EOcmozLMowBwxC', 'msg_24bd05d31001YZJI2VbgXFgEj0', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568278390, 1796568286417, '{"type":"tool","tool":"bash","callID":"call_fake_002","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"truncated":false},"title":"ls -1","time":{"start":1796568278508,"end":1796568286416}}}');
INSERT INTO "part" VALUES ('prt_24bd084f8001NIqp8laYZg4dTa', 'msg_24bd05d31001YZJI2VbgXFgEj0', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568286456, 1796568286473, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":7699,"input":7690,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd08d81001MZCJ1ur1DqPYif', 'msg_24bd08587001pM0lbcTOnc9KRg', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568288641, 1796568288643, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bd08d8b001YNoZHfvdkshXCi', 'msg_24bd08587001pM0lbcTOnc9KRg', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568288651, 1796568288689, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796568288651,"end":1796568288684}}');
INSERT INTO "part" VALUES ('prt_24bd08dc1001vCUvGgU8R38VSj', 'msg_24bd08587001pM0lbcTOnc9KRg', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568288705, 1796568288706, '{"reason":"stop","type":"step-finish","tokens":{"total":7754,"input":7746,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd0e840001hT7S678EHau7k8', 'msg_24bd0e82d001c2XATqSOYgKbb9', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568317579, 1796568317590, '{"type":"text","text":"\"Now a long answer. [[inflate]]\""}');
INSERT INTO "part" VALUES ('prt_24bd1057b001abqdHRqArH57VJ', 'msg_24bd0fed1001icfGBE4pmUK3mr', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568319355, 1796568319358, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bd105a40015OR3F41Vm6gpxa', 'msg_24bd0fed1001icfGBE4pmUK3mr', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568319396, 1796568319473, '{"type":"text","text":"OK.","time":{"start":1796568319396,"end":1796568319454}}');
INSERT INTO "part" VALUES ('prt_24bd10607001HViHzj2jAd8xZc', 'msg_24bd0fed1001icfGBE4pmUK3mr', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568319496, 1796568319497, '{"reason":"stop","type":"step-finish","tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd1063b001Ruq8WBrwdC6Kww', 'msg_24bd1062b001h6yGblkjvJxNuS', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568319547, 1796568321578, '{"type":"compaction","auto":true,"overflow":false,"tail_start_id":"msg_24bd0e82d001c2XATqSOYgKbb9"}');
INSERT INTO "part" VALUES ('prt_24bd10d6a001tSuIRCjgU0OJMm', 'msg_24bd10671001RUcn6yZqV1oVZ5', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568321386, 1796568321408, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bd10d950010PK2t4ErA7toFx', 'msg_24bd10671001RUcn6yZqV1oVZ5', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568321429, 1796568321478, '{"type":"text","text":"Summary for the next model: the user ran shell commands in a scratch directory and asked for short replies. Nothing is pending.","time":{"start":1796568321429,"end":1796568321477}}');
INSERT INTO "part" VALUES ('prt_24bd10de4001dMrkaqpqHWq1nk', 'msg_24bd10671001RUcn6yZqV1oVZ5', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568321509, 1796568321532, '{"reason":"stop","type":"step-finish","tokens":{"total":618,"input":586,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd10e54001aHllI0nsHAvt7f', 'msg_24bd10e2b001L1M0R0OqY47tLj', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568321621, 1796568321664, '{"type":"text","metadata":{"compaction_continue":true},"synthetic":true,"text":"Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.","time":{"start":1796568321620,"end":1796568321620}}');
INSERT INTO "part" VALUES ('prt_24bd11dc30010CJNLdYVjsJoA7', 'msg_24bd10e82001kSM0xPQ3GlTRKB', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568325571, 1796568325585, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bd11de10012pqexc2yTIG1NZ', 'msg_24bd10e82001kSM0xPQ3GlTRKB', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568325601, 1796568325631, '{"type":"text","text":"OK.","time":{"start":1796568325601,"end":1796568325630}}');
INSERT INTO "part" VALUES ('prt_24bd11e1b001HVF3ct2e4M4V8R', 'msg_24bd10e82001kSM0xPQ3GlTRKB', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568325659, 1796568325678, '{"reason":"stop","type":"step-finish","tokens":{"total":7783,"input":7782,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd15be30011wySHDPhVEBewW', 'msg_24bd15be0001r6BbJsGj0OgkJD', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568347663, 1796568347674, '{"type":"text","text":"\"One more turn.\""}');
INSERT INTO "part" VALUES ('prt_24bd18c3b001U4Dj8sf64BfQxP', 'msg_24bd1747f001p6yERPJu3FjEye', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568353853, 1796568353887, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bd18c7e001E0U3qw6FGp0s6A', 'msg_24bd1747f001p6yERPJu3FjEye', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568353918, 1796568353957, '{"type":"text","text":"OK.","time":{"start":1796568353918,"end":1796568353951}}');
INSERT INTO "part" VALUES ('prt_24bd18cb0001aM0McIPygA658Z', 'msg_24bd1747f001p6yERPJu3FjEye', 'ses_db42fc4f5ffe4W48B3XY0C2fUW', 1796568353991, 1796568354007, '{"reason":"stop","type":"step-finish","tokens":{"total":7804,"input":7803,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
