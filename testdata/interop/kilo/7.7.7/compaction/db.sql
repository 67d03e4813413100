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
INSERT INTO "session" VALUES ('ses_db4124cf1ffeZgyp7uoR1GOsT2', 'global', NULL, NULL, 'jolly-meadow', '/work/interop/project', 'tmp/ctxfold-kilo.TX7j4xCE/compaction/project', 'New session - 2026-12-06T15:16:38.798Z', '7.7.7', NULL, 0, 0, 0, NULL, NULL, 0, 1838224, 51, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"suggest","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'code', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796570198798, 1796570426372, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bee4679001HG4TqGdiVmn8fA', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570236537, 1796570260553, '{"role":"user","time":{"created":1796570236537},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bee77b7001ypGbBJTRawIwms', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570249143, 1796570256754, '{"parentID":"msg_24bee4679001HG4TqGdiVmn8fA","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12661,"input":12652,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796570249143,"completed":1796570256743},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24bee95bf001G5jdqAnULjhro0', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570256831, 1796570260279, '{"parentID":"msg_24bee4679001HG4TqGdiVmn8fA","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12717,"input":12709,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796570256831,"completed":1796570260274},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bef71a8001NW478DUjU8HfZI', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570313128, 1796570333907, '{"role":"user","time":{"created":1796570313128},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24befb62b001WEwqcIG2wyItv6', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570330667, 1796570333038, '{"parentID":"msg_24bef71a8001NW478DUjU8HfZI","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796570330667,"completed":1796570333036},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bf0c286001pqhsx2236RfCI6', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570399368, 1796570400521, '{"role":"user","time":{"created":1796570399368},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"}}');
INSERT INTO "message" VALUES ('msg_24bf10754001gBG1orokxt41UY', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570416980, 1796570420542, '{"role":"user","model":{"providerID":"fake","modelID":"fake-model"},"agent":"code","time":{"created":1796570416980},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bf10777001UEhyFjXqHCOWwq', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570417015, 1796570419881, '{"role":"assistant","parentID":"msg_24bf10754001gBG1orokxt41UY","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900032,"input":900000,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796570417015,"completed":1796570419817},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bf112c7001RCPjoZCm1b5Bhg', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570419911, 1796570426389, '{"role":"user","time":{"created":1796570419911},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bf1140b001XSIsCQ9xegavsa', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570420235, 1796570424994, '{"parentID":"msg_24bf112c7001RCPjoZCm1b5Bhg","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12864,"input":12863,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796570420235,"completed":1796570424986},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bee4b3f001fFtWZTCHtjqAIO', 'msg_24bee4679001HG4TqGdiVmn8fA', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570237835, 1796570237861, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24bee7f7a001s2cqE996AMNWMm', 'msg_24bee77b7001ypGbBJTRawIwms', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570251130, 1796570251348, '{"type":"step-start","time":{"start":1796570250608}}');
INSERT INTO "part" VALUES ('prt_24bee814d001KcFvMxHN2vPqg6', 'msg_24bee77b7001ypGbBJTRawIwms', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570251598, 1796570255809, '{"type":"tool","tool":"bash","callID":"call_fake_001","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"description":"ls -1","truncated":false,"approval":{"source":"global","rule":{"permission":"bash","pattern":"*","action":"allow"}}},"title":"ls -1","time":{"start":1796570252080,"end":1796570255795}}}');
INSERT INTO "part" VALUES ('prt_24bee94d00010OO9yPV33GLyXE', 'msg_24bee77b7001ypGbBJTRawIwms', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570256592, 1796570256605, '{"reason":"tool-calls","type":"step-finish","time":{"start":1796570250608,"end":1796570256573,"elapsed":5965},"metrics":{"generation":1.5088013411567478,"source":"computed"},"tokens":{"total":12661,"input":12652,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bee9fd70017BYY1M2Y6wSBNi', 'msg_24bee95bf001G5jdqAnULjhro0', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570259416, 1796570259429, '{"type":"step-start","time":{"start":1796570259199}}');
INSERT INTO "part" VALUES ('prt_24beea004001uQZPUx4cWc5Mna', 'msg_24bee95bf001G5jdqAnULjhro0', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570259461, 1796570259546, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796570259460,"end":1796570259532}}');
INSERT INTO "part" VALUES ('prt_24beea1ec001R5na8oxa6lmIsj', 'msg_24bee95bf001G5jdqAnULjhro0', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570259952, 1796570259958, '{"reason":"stop","type":"step-finish","time":{"start":1796570259199,"end":1796570259927,"elapsed":728},"metrics":{"generation":10.989010989010989,"source":"computed"},"tokens":{"total":12717,"input":12709,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bef7606001OUx8Bay7rmv6RX', 'msg_24bef71a8001NW478DUjU8HfZI', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570314285, 1796570314294, '{"type":"text","text":"\"Now a long answer. [[inflate]]\""}');
INSERT INTO "part" VALUES ('prt_24befbdc3001iS48yY5uXkl5zb', 'msg_24befb62b001WEwqcIG2wyItv6', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570332612, 1796570332617, '{"type":"step-start","time":{"start":1796570331585}}');
INSERT INTO "part" VALUES ('prt_24befbde5001g3B0N8Rbj8xnme', 'msg_24befb62b001WEwqcIG2wyItv6', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570332645, 1796570332653, '{"type":"text","text":"OK.","time":{"start":1796570332645,"end":1796570332650}}');
INSERT INTO "part" VALUES ('prt_24befbf61001LVYTeg5nex1uUY', 'msg_24befb62b001WEwqcIG2wyItv6', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570333025, 1796570333027, '{"reason":"stop","type":"step-finish","time":{"start":1796570331585,"end":1796570332939,"elapsed":1354},"metrics":{"generation":0.7385524372230429,"source":"computed"},"tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bf0c655001zL7Z5S4L5i2eRj', 'msg_24bf0c286001pqhsx2236RfCI6', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570400625, 1796570400686, '{"type":"text","text":"\"One more turn.\""}');
INSERT INTO "part" VALUES ('prt_24bf10758001G4cN2zyp5GtZf4', 'msg_24bf10754001gBG1orokxt41UY', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570416985, 1796570416986, '{"type":"compaction","auto":true,"overflow":false}');
INSERT INTO "part" VALUES ('prt_24bf10ef6001MwgLEFjcI0wYyJ', 'msg_24bf10777001UEhyFjXqHCOWwq', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570418934, 1796570418949, '{"type":"step-start","time":{"start":1796570417597}}');
INSERT INTO "part" VALUES ('prt_24bf10f0b001w3doZigYjgwFEO', 'msg_24bf10777001UEhyFjXqHCOWwq', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570418955, 1796570418994, '{"type":"text","text":"Summary for the next model: the user ran shell commands in a scratch directory and asked for short replies. Nothing is pending.","time":{"start":1796570418955,"end":1796570418984}}');
INSERT INTO "part" VALUES ('prt_24bf1123c001ZIHMMDWC8Fi1t4', 'msg_24bf10777001UEhyFjXqHCOWwq', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570419773, 1796570419776, '{"reason":"stop","type":"step-finish","time":{"start":1796570417597,"end":1796570419765,"elapsed":2168},"metrics":{"generation":14.760147601476016,"source":"computed"},"tokens":{"total":900032,"input":900000,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bf11364001PDZHtvg18f0Eoj', 'msg_24bf112c7001RCPjoZCm1b5Bhg', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570420069, 1796570420070, '{"type":"text","text":"\"One more turn.\"","synthetic":true}');
INSERT INTO "part" VALUES ('prt_24bf113f2001yBEY9NUCEWXwk8', 'msg_24bf112c7001RCPjoZCm1b5Bhg', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570420210, 1796570420212, '{"type":"text","text":"\n\n<system-reminder>\nThe active agent has changed from compaction to code.\nThis supersedes earlier agent-switch reminders. Your instructions and permissions are those of the code agent as given in the current system prompt; earlier turns reflect the previous agent, not your current capabilities.\nThis agent may modify files and run commands within its configured permissions.\n</system-reminder>\n","synthetic":true}');
INSERT INTO "part" VALUES ('prt_24bf123a8001jRiwTyaQRTziIP', 'msg_24bf1140b001XSIsCQ9xegavsa', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570424233, 1796570424250, '{"type":"step-start","time":{"start":1796570423643}}');
INSERT INTO "part" VALUES ('prt_24bf123c60016nLtw9RstetyHQ', 'msg_24bf1140b001XSIsCQ9xegavsa', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570424263, 1796570424288, '{"type":"text","text":"OK.","time":{"start":1796570424262,"end":1796570424286}}');
INSERT INTO "part" VALUES ('prt_24bf12663001NVv0pcQbongm14', 'msg_24bf1140b001XSIsCQ9xegavsa', 'ses_db4124cf1ffeZgyp7uoR1GOsT2', 1796570424931, 1796570424946, '{"reason":"stop","type":"step-finish","time":{"start":1796570423643,"end":1796570424880,"elapsed":1236},"metrics":{"generation":0.8090614886731392,"source":"computed"},"tokens":{"total":12864,"input":12863,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
