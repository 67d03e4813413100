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
INSERT INTO "session" VALUES ('ses_db18b6542ffejH0ymVzNlBbB3O', 'global', NULL, NULL, 'tidy-knight', '/work/interop/project', 'tmp/ctxfold-kilo.DCEPhuLg/chat/project', 'OK.', '7.7.9', NULL, 0, 0, 0, NULL, NULL, 0, 28912, 2, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"suggest","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'code', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796612594366, 1796612610844, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24e74ac3b001snQdk6PqqGgggf', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612598843, 1796612600358, '{"role":"user","time":{"created":1796612598843},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e74b03a001TSG57pBPn2LWnt', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612599866, 1796612600336, '{"parentID":"msg_24e74ac3b001snQdk6PqqGgggf","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14419,"input":14418,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612599866,"completed":1796612600334},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24e74d62f001lOIQgC9WuR89uW', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612609584, 1796612610850, '{"role":"user","time":{"created":1796612609584},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e74d96e001teEbMkzsQRODE4', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612610414, 1796612610734, '{"parentID":"msg_24e74d62f001lOIQgC9WuR89uW","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14495,"input":14494,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612610414,"completed":1796612610732},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24e74ac79001vc80222YsJAbgQ', 'msg_24e74ac3b001snQdk6PqqGgggf', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612598918, 1796612598922, '{"type":"text","text":"\"Hello, fake provider. Say hi.\""}');
INSERT INTO "part" VALUES ('prt_24e74b17b001kar7Vx0o55XNfZ', 'msg_24e74b03a001TSG57pBPn2LWnt', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612600187, 1796612600189, '{"type":"step-start","time":{"start":1796612600148}}');
INSERT INTO "part" VALUES ('prt_24e74b17f0013wuBZfRUlLcuOA', 'msg_24e74b03a001TSG57pBPn2LWnt', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612600191, 1796612600196, '{"type":"text","text":"OK.","time":{"start":1796612600191,"end":1796612600195}}');
INSERT INTO "part" VALUES ('prt_24e74b1de001EoS6ZxhJvntAyC', 'msg_24e74b03a001TSG57pBPn2LWnt', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612600286, 1796612600287, '{"reason":"stop","type":"step-finish","time":{"start":1796612600148,"end":1796612600284,"elapsed":136},"metrics":{"generation":7.352941176470588,"source":"computed"},"tokens":{"total":14419,"input":14418,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24e74d643001va7IvDnvCQmJeb', 'msg_24e74d62f001lOIQgC9WuR89uW', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612609611, 1796612609613, '{"type":"text","text":"\"Second turn.\""}');
INSERT INTO "part" VALUES ('prt_24e74da76001pW8HT8xOHFKSBJ', 'msg_24e74d96e001teEbMkzsQRODE4', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612610678, 1796612610680, '{"type":"step-start","time":{"start":1796612610647}}');
INSERT INTO "part" VALUES ('prt_24e74da7a001wCesZb442z80pG', 'msg_24e74d96e001teEbMkzsQRODE4', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612610682, 1796612610687, '{"type":"text","text":"OK.","time":{"start":1796612610682,"end":1796612610686}}');
INSERT INTO "part" VALUES ('prt_24e74daa3001G3EbJPoTGPAKCA', 'msg_24e74d96e001teEbMkzsQRODE4', 'ses_db18b6542ffejH0ymVzNlBbB3O', 1796612610723, 1796612610724, '{"reason":"stop","type":"step-finish","time":{"start":1796612610647,"end":1796612610721,"elapsed":74},"metrics":{"generation":13.513513513513514,"source":"computed"},"tokens":{"total":14495,"input":14494,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
