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
INSERT INTO "session" VALUES ('ses_db42d0d9effeai3nFaX2PyXwMk', 'global', NULL, NULL, 'cosmic-moon', '/work/interop/project', 'tmp/ctxfold-kilo.JI5bKQHJ/chat/project', 'New session - 2026-12-06T14:47:25.537Z', '7.7.7', NULL, 0, 0, 0, NULL, NULL, 0, 25370, 2, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"suggest","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'code', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796568445537, 1796568585313, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bd360ca001GM14pUfPT0xv6I', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568473802, 1796568483174, '{"role":"user","time":{"created":1796568473802},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd37888001cxjL3dM5JJ12Yk', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568479880, 1796568482256, '{"parentID":"msg_24bd360ca001GM14pUfPT0xv6I","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12648,"input":12647,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568479880,"completed":1796568482190},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bd4d36a001S6UAKqWGAN385F', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568568682, 1796568585474, '{"role":"user","time":{"created":1796568568682},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd4f6ce001XYUPk7wV4zSq8c', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568577742, 1796568585059, '{"parentID":"msg_24bd4d36a001S6UAKqWGAN385F","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12724,"input":12723,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568577742,"completed":1796568584979},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bd3613c001k5N3TjiaEgye56', 'msg_24bd360ca001GM14pUfPT0xv6I', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568473925, 1796568473926, '{"type":"text","text":"\"Hello, fake provider. Say hi.\""}');
INSERT INTO "part" VALUES ('prt_24bd37f21001pRgkxGaxBUUEYF', 'msg_24bd37888001cxjL3dM5JJ12Yk', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568481570, 1796568481571, '{"type":"step-start","time":{"start":1796568481110}}');
INSERT INTO "part" VALUES ('prt_24bd37f53001HDDCJJ0pt0wAej', 'msg_24bd37888001cxjL3dM5JJ12Yk', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568481619, 1796568481714, '{"type":"text","text":"OK.","time":{"start":1796568481619,"end":1796568481668}}');
INSERT INTO "part" VALUES ('prt_24bd3810500102ZwTNSIw2uVwF', 'msg_24bd37888001cxjL3dM5JJ12Yk', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568482053, 1796568482055, '{"reason":"stop","type":"step-finish","time":{"start":1796568481110,"end":1796568482028,"elapsed":918},"metrics":{"generation":1.0893246187363834,"source":"computed"},"tokens":{"total":12648,"input":12647,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd4d396001PKIzodYB6ZuicG', 'msg_24bd4d36a001S6UAKqWGAN385F', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568568756, 1796568568758, '{"type":"text","text":"\"Second turn.\""}');
INSERT INTO "part" VALUES ('prt_24bd50e53001duedh9dB4HCYAi', 'msg_24bd4f6ce001XYUPk7wV4zSq8c', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568583764, 1796568583791, '{"type":"step-start","time":{"start":1796568583512}}');
INSERT INTO "part" VALUES ('prt_24bd50e990013gH2LEkdvDrx5T', 'msg_24bd4f6ce001XYUPk7wV4zSq8c', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568583833, 1796568583976, '{"type":"text","text":"OK.","time":{"start":1796568583833,"end":1796568583943}}');
INSERT INTO "part" VALUES ('prt_24bd511b6001bdiN8juhvjxZYw', 'msg_24bd4f6ce001XYUPk7wV4zSq8c', 'ses_db42d0d9effeai3nFaX2PyXwMk', 1796568584630, 1796568584632, '{"reason":"stop","type":"step-finish","time":{"start":1796568583512,"end":1796568584616,"elapsed":1103},"metrics":{"generation":0.9066183136899365,"source":"computed"},"tokens":{"total":12724,"input":12723,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
