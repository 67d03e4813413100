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
INSERT INTO "session" VALUES ('ses_db431f219ffecjmSKW4pPEyNK3', 'global', NULL, NULL, 'jolly-engine', '/work/interop/project', 'tmp/ctxfold-opencode.KcdLRSH7/compaction/project', 'New session - 2026-12-06T14:42:04.902Z', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0, 1830966, 52, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'build', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796568124902, 1796568190224, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bce10cf0012HMAOZuYDwfNYz', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568125647, 1796568141165, '{"role":"user","time":{"created":1796568125647},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bce2dad001JhJPDDi2TW9kfN', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568133037, 1796568140241, '{"parentID":"msg_24bce10cf0012HMAOZuYDwfNYz","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7697,"input":7688,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568133037,"completed":1796568140225},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24bce4a45001Ldu1PsyE5ke1CJ', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568140357, 1796568141747, '{"parentID":"msg_24bce10cf0012HMAOZuYDwfNYz","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7753,"input":7745,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568140357,"completed":1796568141746},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bce8032001MuA0Vgpr02HlB9', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568154163, 1796568167754, '{"role":"user","time":{"created":1796568154163},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bce92330011rpla5zQPrUXMi', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568158771, 1796568167598, '{"parentID":"msg_24bce8032001MuA0Vgpr02HlB9","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568158771,"completed":1796568167593},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bceb4b50018W8hv3t4HCU4JI', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167605, 1796568168124, '{"role":"user","model":{"providerID":"fake","modelID":"fake-model"},"agent":"build","time":{"created":1796568167605},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bceb5020015rB5oDEEAkh1Ef', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167682, 1796568167967, '{"role":"assistant","parentID":"msg_24bceb4b50018W8hv3t4HCU4JI","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":900032,"input":900000,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568167682,"completed":1796568167960},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bceb6280017MyASq36C0BWIO', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167977, 1796568167978, '{"role":"user","time":{"created":1796568167977},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}');
INSERT INTO "message" VALUES ('msg_24bceb643001mPsECg77uu6uuM', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568168003, 1796568169101, '{"parentID":"msg_24bceb6280017MyASq36C0BWIO","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7757,"input":7756,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568168003,"completed":1796568169094},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bcf0076001qe2PWO9lhVkXSJ', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568186998, 1796568189675, '{"role":"user","time":{"created":1796568186998},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bcf0a0a001eM9ZDZWpcdg0WT', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568189450, 1796568190121, '{"parentID":"msg_24bcf0076001qe2PWO9lhVkXSJ","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7778,"input":7777,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568189450,"completed":1796568190120},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bce10dd001vP0aOz2cL1at1b', 'msg_24bce10cf0012HMAOZuYDwfNYz', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568132715, 1796568132824, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24bce4533001jGhyWmCpF51bq6', 'msg_24bce2dad001JhJPDDi2TW9kfN', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568139060, 1796568139062, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bce454b001qyx3a03K4sTKc7', 'msg_24bce2dad001JhJPDDi2TW9kfN', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568139083, 1796568139895, '{"type":"tool","tool":"bash","callID":"call_fake_002","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"truncated":false},"title":"ls -1","time":{"start":1796568139155,"end":1796568139863}}}');
INSERT INTO "part" VALUES ('prt_24bce490f001g143r0XXNzLlRg', 'msg_24bce2dad001JhJPDDi2TW9kfN', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568140047, 1796568140089, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":7697,"input":7688,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bce4f39001fp70uFRPHpL57g', 'msg_24bce4a45001Ldu1PsyE5ke1CJ', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568141625, 1796568141627, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bce4f4b001VfxPGVXppBu4HD', 'msg_24bce4a45001Ldu1PsyE5ke1CJ', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568141643, 1796568141689, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796568141643,"end":1796568141679}}');
INSERT INTO "part" VALUES ('prt_24bce4f8500130jToAXbr4qmJE', 'msg_24bce4a45001Ldu1PsyE5ke1CJ', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568141701, 1796568141706, '{"reason":"stop","type":"step-finish","tokens":{"total":7753,"input":7745,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bce803c001BuRNINhyrNeIpM', 'msg_24bce8032001MuA0Vgpr02HlB9', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568158673, 1796568158676, '{"type":"text","text":"\"Now a long answer. [[inflate]]\""}');
INSERT INTO "part" VALUES ('prt_24bceb3ba001eyFo8jhzewzwei', 'msg_24bce92330011rpla5zQPrUXMi', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167354, 1796568167405, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bceb4060014gFVngbhZIIANY', 'msg_24bce92330011rpla5zQPrUXMi', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167430, 1796568167525, '{"type":"text","text":"OK.","time":{"start":1796568167430,"end":1796568167513}}');
INSERT INTO "part" VALUES ('prt_24bceb484001F3bWMeOzkpcrot', 'msg_24bce92330011rpla5zQPrUXMi', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167556, 1796568167558, '{"reason":"stop","type":"step-finish","tokens":{"total":900001,"input":900000,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bceb4b7001f7Wdj9Jk2dFESB', 'msg_24bceb4b50018W8hv3t4HCU4JI', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167607, 1796568167637, '{"type":"compaction","auto":true,"overflow":false}');
INSERT INTO "part" VALUES ('prt_24bceb595001k5mDLTKWIjKJvc', 'msg_24bceb5020015rB5oDEEAkh1Ef', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167829, 1796568167842, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bceb5a4001EDULlHDYKL6MXb', 'msg_24bceb5020015rB5oDEEAkh1Ef', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167844, 1796568167847, '{"type":"text","text":"Summary for the next model: the user ran shell commands in a scratch directory and asked for short replies. Nothing is pending.","time":{"start":1796568167844,"end":1796568167846}}');
INSERT INTO "part" VALUES ('prt_24bceb5d2001RLjOFJX90osH9z', 'msg_24bceb5020015rB5oDEEAkh1Ef', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167890, 1796568167932, '{"reason":"stop","type":"step-finish","tokens":{"total":900032,"input":900000,"output":32,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bceb632001IZxhjXzVxW1Uw6', 'msg_24bceb6280017MyASq36C0BWIO', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568167986, 1796568167987, '{"type":"text","metadata":{"compaction_continue":true},"synthetic":true,"text":"Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.","time":{"start":1796568167986,"end":1796568167986}}');
INSERT INTO "part" VALUES ('prt_24bceba1a001XVgthhOBxJLQmt', 'msg_24bceb643001mPsECg77uu6uuM', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568168988, 1796568168989, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bceba450012WbZht6FXWDInF', 'msg_24bceb643001mPsECg77uu6uuM', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568169030, 1796568169054, '{"type":"text","text":"OK.","time":{"start":1796568169029,"end":1796568169052}}');
INSERT INTO "part" VALUES ('prt_24bceba5f001wutvJDtNV0s3Ij', 'msg_24bceb643001mPsECg77uu6uuM', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568169064, 1796568169066, '{"reason":"stop","type":"step-finish","tokens":{"total":7757,"input":7756,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bcf0079001W6tBeHTl5c1TZc', 'msg_24bcf0076001qe2PWO9lhVkXSJ', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568189401, 1796568189403, '{"type":"text","text":"\"One more turn.\""}');
INSERT INTO "part" VALUES ('prt_24bcf0c840018N6wwbO3TAxGFn', 'msg_24bcf0a0a001eM9ZDZWpcdg0WT', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568190085, 1796568190086, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bcf0c8800121Ajykcf2M5QVz', 'msg_24bcf0a0a001eM9ZDZWpcdg0WT', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568190088, 1796568190101, '{"type":"text","text":"OK.","time":{"start":1796568190088,"end":1796568190100}}');
INSERT INTO "part" VALUES ('prt_24bcf0c9a001hznLspcy7UeuDF', 'msg_24bcf0a0a001eM9ZDZWpcdg0WT', 'ses_db431f219ffecjmSKW4pPEyNK3', 1796568190106, 1796568190108, '{"reason":"stop","type":"step-finish","tokens":{"total":7778,"input":7777,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
