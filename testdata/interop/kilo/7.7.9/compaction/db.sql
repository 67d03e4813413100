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
INSERT INTO "session" VALUES ('ses_db18ac3c5ffeyQLJpwOYLz5vNm', 'global', NULL, NULL, 'proud-sailor', '/work/interop/project', 'tmp/ctxfold-kilo.DCEPhuLg/compaction/project', 'New session - 2026-12-07T03:03:55.706Z', '7.7.9', NULL, 0, 0, 0, NULL, NULL, 0, 1843537, 51, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"suggest","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'code', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796612635706, 1796612661010, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24e754c24001wtyPpJvFpF1wp6', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612639780, 1796612641997, '{"role":"user","time":{"created":1796612639780},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e755079001ilH9BEFjdQpDlK', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612640889, 1796612641597, '{"parentID":"msg_24e754c24001wtyPpJvFpF1wp6","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14432,"input":14423,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612640889,"completed":1796612641595},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24e755346001Utm6PtBhymBzZm', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641606, 1796612641851, '{"parentID":"msg_24e754c24001wtyPpJvFpF1wp6","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14488,"input":14480,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612641606,"completed":1796612641849},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24e757553001ZLRDOMhqNqwjpZ', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612650323, 1796612651962, '{"role":"user","time":{"created":1796612650323},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e757a16001ESus9h2PlcDn5a', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612651542, 1796612651859, '{"parentID":"msg_24e757553001ZLRDOMhqNqwjpZ","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612651542,"completed":1796612651858},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24e75990f001oA0MS5cLBahb32', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612659471, 1796612659495, '{"role":"user","time":{"created":1796612659471},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"}}');
INSERT INTO "message" VALUES ('msg_24e759c71001JcMnhOwTWOJp2S', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660337, 1796612660573, '{"role":"user","model":{"providerID":"fake","modelID":"fake-model"},"agent":"code","time":{"created":1796612660337},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e759c7e001eXYASenJ8z2CT2', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660350, 1796612660515, '{"role":"assistant","parentID":"msg_24e759c71001JcMnhOwTWOJp2S","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900032,"input":900000,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612660350,"completed":1796612660513},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24e759d25001kAUt75LGgenno4', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660517, 1796612661015, '{"role":"user","time":{"created":1796612660517},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e759d47001ZRlXIT1KET433K', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660551, 1796612660899, '{"parentID":"msg_24e759d25001kAUt75LGgenno4","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14635,"input":14634,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612660551,"completed":1796612660898},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24e754c5f001jlEbV4r6PqmCW6', 'msg_24e754c24001wtyPpJvFpF1wp6', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612639844, 1796612639847, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24e7551c8001qCSZp3706T7mR0', 'msg_24e755079001ilH9BEFjdQpDlK', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641225, 1796612641229, '{"type":"step-start","time":{"start":1796612641044}}');
INSERT INTO "part" VALUES ('prt_24e7551db001YN6U1sHq3sBNnr', 'msg_24e755079001ilH9BEFjdQpDlK', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641243, 1796612641469, '{"type":"tool","tool":"bash","callID":"call_fake_001","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"description":"ls -1","truncated":false,"approval":{"source":"global","rule":{"permission":"bash","pattern":"*","action":"allow"}}},"title":"ls -1","time":{"start":1796612641265,"end":1796612641455}}}');
INSERT INTO "part" VALUES ('prt_24e75532a001r7l1lYXSO8djlI', 'msg_24e755079001ilH9BEFjdQpDlK', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641578, 1796612641583, '{"reason":"tool-calls","type":"step-finish","time":{"start":1796612641044,"end":1796612641576,"elapsed":532},"metrics":{"generation":16.917293233082706,"source":"computed"},"tokens":{"total":14432,"input":14423,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24e7553f9001bnPRVaBOyP74b7', 'msg_24e755346001Utm6PtBhymBzZm', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641785, 1796612641786, '{"type":"step-start","time":{"start":1796612641768}}');
INSERT INTO "part" VALUES ('prt_24e755400001oq5bHJ4SwTUgah', 'msg_24e755346001Utm6PtBhymBzZm', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641792, 1796612641798, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796612641792,"end":1796612641797}}');
INSERT INTO "part" VALUES ('prt_24e75542d001gpgldjBdqfmUf5', 'msg_24e755346001Utm6PtBhymBzZm', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612641838, 1796612641839, '{"reason":"stop","type":"step-finish","time":{"start":1796612641768,"end":1796612641836,"elapsed":68},"metrics":{"generation":117.6470588235294,"source":"computed"},"tokens":{"total":14488,"input":14480,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24e75755f001uDa1sXeaycRjYV', 'msg_24e757553001ZLRDOMhqNqwjpZ', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612650375, 1796612650380, '{"type":"text","text":"\"Now a long answer. [[inflate]]\""}');
INSERT INTO "part" VALUES ('prt_24e757af300161gpf4lrb5awHw', 'msg_24e757a16001ESus9h2PlcDn5a', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612651778, 1796612651781, '{"type":"step-start","time":{"start":1796612651704}}');
INSERT INTO "part" VALUES ('prt_24e757b07001nNw1vVb5Ubc8BL', 'msg_24e757a16001ESus9h2PlcDn5a', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612651783, 1796612651789, '{"type":"text","text":"OK.","time":{"start":1796612651783,"end":1796612651787}}');
INSERT INTO "part" VALUES ('prt_24e757b480014nnaLv5Sjqs2dh', 'msg_24e757a16001ESus9h2PlcDn5a', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612651848, 1796612651849, '{"reason":"stop","type":"step-finish","time":{"start":1796612651704,"end":1796612651846,"elapsed":142},"metrics":{"generation":7.042253521126761,"source":"computed"},"tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24e759921001IKrSr3KcI2Aijt', 'msg_24e75990f001oA0MS5cLBahb32', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612659498, 1796612659500, '{"type":"text","text":"\"One more turn.\""}');
INSERT INTO "part" VALUES ('prt_24e759c74001kjhlqzocIQOCMR', 'msg_24e759c71001JcMnhOwTWOJp2S', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660340, 1796612660341, '{"type":"compaction","auto":true,"overflow":false}');
INSERT INTO "part" VALUES ('prt_24e759ce7001iJk9dh1eSRckqQ', 'msg_24e759c7e001eXYASenJ8z2CT2', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660455, 1796612660457, '{"type":"step-start","time":{"start":1796612660437}}');
INSERT INTO "part" VALUES ('prt_24e759ceb001LeRRcy5FJFJ3Nn', 'msg_24e759c7e001eXYASenJ8z2CT2', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660459, 1796612660465, '{"type":"text","text":"Summary for the next model: the user ran shell commands in a scratch directory and asked for short replies. Nothing is pending.","time":{"start":1796612660459,"end":1796612660464}}');
INSERT INTO "part" VALUES ('prt_24e759d18001DWr8bcE9d0YOeQ', 'msg_24e759c7e001eXYASenJ8z2CT2', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660505, 1796612660506, '{"reason":"stop","type":"step-finish","time":{"start":1796612660437,"end":1796612660503,"elapsed":65},"metrics":{"generation":492.3076923076923,"source":"computed"},"tokens":{"total":900032,"input":900000,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24e759d2700130Cv4n7PK8bg1b', 'msg_24e759d25001kAUt75LGgenno4', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660519, 1796612660520, '{"type":"text","text":"\"One more turn.\"","synthetic":true}');
INSERT INTO "part" VALUES ('prt_24e759d44001uIFdGov501Noi4', 'msg_24e759d25001kAUt75LGgenno4', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660548, 1796612660550, '{"type":"text","text":"\n\n<system-reminder>\nThe active agent has changed from compaction to code.\nThis supersedes earlier agent-switch reminders. Your instructions and permissions are those of the code agent as given in the current system prompt; earlier turns reflect the previous agent, not your current capabilities.\nThis agent may modify files and run commands within its configured permissions.\n</system-reminder>\n","synthetic":true}');
INSERT INTO "part" VALUES ('prt_24e759e7b0015QddoIbwv9HyOx', 'msg_24e759d47001ZRlXIT1KET433K', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660860, 1796612660861, '{"type":"step-start","time":{"start":1796612660826}}');
INSERT INTO "part" VALUES ('prt_24e759e7f001o4bku1ekLf4tLh', 'msg_24e759d47001ZRlXIT1KET433K', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660863, 1796612660868, '{"type":"text","text":"OK.","time":{"start":1796612660863,"end":1796612660866}}');
INSERT INTO "part" VALUES ('prt_24e759e9a001GqhVM1VZL1H3jB', 'msg_24e759d47001ZRlXIT1KET433K', 'ses_db18ac3c5ffeyQLJpwOYLz5vNm', 1796612660890, 1796612660891, '{"reason":"stop","type":"step-finish","time":{"start":1796612660826,"end":1796612660888,"elapsed":62},"metrics":{"generation":16.129032258064516,"source":"computed"},"tokens":{"total":14635,"input":14634,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
