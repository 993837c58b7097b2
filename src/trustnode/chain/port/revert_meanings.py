"""What each custom error of the deployed protocol v2 contracts means, for people.

`tests/chain/test_port.py` checks that every error declared by a deployed contract's ABI has
an entry here, so a contract change that adds an error must say what it means.
"""

from __future__ import annotations

#: The contracts a deployment holds (`chain.deploy.CONTRACT_NAMES` plus the VRF source).
DEPLOYED = (
    "AuditSessions",
    "DrawModule",
    "VotingModule",
    "SettlementModule",
    "Staking",
    "SortitionTrees",
    "AuditorRegistry",
    "LookaheadRandomness",
    "VRFRandomness",
    "TrustToken",
    "Treasury",
    "AppealModule",
    "AppealSettlement",
    "CanaryModule",
)

MEANINGS: dict[str, str] = {
    # sessions (AuditSessions)
    "ExtensionsAlreadySet": "the appeal and canary modules are already wired to this core (set once)",
    "ZeroExtension": "the appeal or canary module address is zero",
    "InvalidSegments": "the trace has no segments or more than the contract's limit",
    "InvalidTier": "a segment or auditor names a tier the contract does not know",
    "InvalidWeight": "a segment weight is not what the parameters require",
    "FeeTooLow": "the fee does not cover the reward of every seat",
    "FeeTooHigh": "the fee does not fit the contract's fee field",
    "NotProvider": "this node's account did not open the session",
    "UnknownSession": "the session does not exist on this chain (was the chain reset?)",
    "WrongStatus": "the session is not in the phase this action needs",
    "DrawComplete": "every seat is drawn already",
    "DrawIncomplete": "the draw has not filled every seat yet",
    "EmptyManifest": "the key manifest CID is empty",
    "RevealOpen": "the reveal phase is still open",
    "SlashSeedPending": "the slash coins' randomness is not fixed yet; settle a few blocks later",
    "RandomnessTooSlow": (
        "the randomness source waits longer than the draw's snapshot stays readable (its delay or the"
        " canary window exceeds an epoch, or a VRF source's confirmations were raised): the session would"
        " never be drawn, so nothing was opened or paid; the operator must configure a faster source"
    ),
    "SourceBusy": (
        "the randomness source cannot take a request right now (a VRF coordinator refuses requests while it"
        " delivers to any consumer): send the transaction again, outside that callback"
    ),
    "SlashRequestGas": (
        "too little gas to request the slash coins' randomness; send the transaction with more gas"
    ),
    "NoSeed": "the draw has not started, so there is no seed yet",
    "UnsupportedRound": "appeal rounds are not deployed yet (round 0 only)",
    "PanelOutOfRange": "the session id or round does not fit a panel key",
    "NotModule": "only the session's modules may call this",
    "ModulesAlreadySet": "the modules are wired already",
    "TooManySources": "no more randomness sources can be added",
    "InvalidParams": "the parameters are out of the contract's bounds",
    "SafeCastOverflowedUintDowncast": "a value does not fit its storage field",
    # draw (DrawModule, SortitionTrees)
    "NotCore": "only the session core may draw",
    "SampleOutOfSnapshot": "a sampled auditor has no weight in the snapshot (a contract bug)",
    "LockMismatch": "Staking opened another ledger entry than its quote said (a contract bug)",
    "SnapshotUnavailable": "the staking snapshot of the session's epoch is no longer readable",
    "SampleOutOfRange": "the draw value exceeds the snapshot's eligible weight",
    "DuplicateExclusion": "an auditor was excluded twice from one sample",
    "ExclusionOutOfRange": "an excluded leaf index no sortition tree can have (beyond 4^16 leaves)",
    "NotStaking": "only Staking writes the sortition trees",
    "TreeFull": "the tier's sortition tree has no room for another auditor",
    "WeightOverflow": "a weight does not fit the sortition tree's lanes",
    "InvalidEpochBlocks": "the epoch length is out of bounds",
    # voting (VotingModule)
    "NotSeated": "this account holds no seat in the session",
    "ZeroCommitment": "a commitment cannot be zero",
    "AlreadyCommitted": "this commitment is on chain already",
    "BadSignature": "the relayed commit's signature is not the auditor's",
    "NotCommitted": "the auditor never committed, so there is nothing to reveal",
    "AlreadyRevealed": "the auditor revealed already",
    "CommitmentMismatch": "the revealed verdicts and salt do not open the stored commitment",
    "InvalidVerdicts": "the verdicts word has bits beyond the seats, or FAIL and abstain together",
    "EmptyBatch": "a batch needs at least one item",
    "InvalidAccountNonce": "the signature's nonce is not the account's current one",
    "InvalidShortString": "an EIP-712 name or version is too long",
    "StringTooLong": "an EIP-712 name or version is too long",
    # settlement (SettlementModule)
    "AlreadySettled": "the auditor is settled already",
    # staking (Staking)
    "ZeroAmount": "the amount must be positive",
    "NotRegistered": "the auditor is not registered",
    "InsufficientShares": "more shares asked than held (a deposit may still wait in the ledger)",
    "DepositPending": "an earlier deposit waits in the pool's ledger: drain it first",
    "CommissionTooHigh": "the commission is above the maximum",
    "UnknownWithdrawal": "no such withdrawal",
    "NotWithdrawalOwner": "the withdrawal belongs to another account",
    "WithdrawalPending": "the withdrawal waits in the pool's ledger behind earlier sessions, or is held "
    "until the snapshots that still count its stake can no longer be drawn (then `drain` the pool)",
    "TierHeld": "a move to another tier waits until the old tier's snapshots can no longer draw the auditor",
    "TierLocked": "a move to another tier waits until every seat the auditor holds is settled (its locks released)",
    "WithdrawalNotReady": "the withdrawal's cooldown is not over",
    "AlreadyClaimed": "the withdrawal was claimed already",
    "EntryNotPending": "the ledger entry is not pending",
    "EntryMismatch": "the ledger entry belongs to another session or auditor",
    "LedgerFull": "the auditor's ledger holds 256 pending entries",
    "AmountOverflow": "an amount does not fit its storage field",
    "SupplyTooLarge": "the token supply could overflow a sortition lane",
    "AlreadyWired": "Staking is wired already",
    "NotRegistry": "only the registry may call this",
    "NotDrawModule": "only the draw module may lock seats",
    "LockRefused": "a draw asked to lock more stake than the auditor's quote allowed (a contract bug)",
    "NotSettlementModule": "only the settlement module may deliver results",
    # registry (AuditorRegistry)
    "ZeroEncryptionKey": "the encryption key cannot be zero",
    "AlreadyRegistered": "the account is registered already",
    # randomness (LookaheadRandomness, VRFRandomness)
    "TooEarly": "the randomness is not available yet; wait a few blocks",
    "TooLate": "the randomness was not fixed within the 256-block hash window",
    "NotFulfilled": "the randomness is not fixed yet",
    "UnknownRequest": "no such randomness request",
    "InvalidDelay": "the lookahead delay is out of bounds",
    "InvalidConfig": "the VRF configuration is invalid",
    "NotRequester": "this account may not request VRF randomness",
    "OnlyCoordinatorCanFulfill": "only the VRF coordinator may deliver randomness",
    "DuplicateRequest": "the VRF coordinator returned a request id twice",
    "AlreadyFulfilled": "the VRF request was fulfilled already",
    "NoRandomWords": "the VRF coordinator delivered no random word",
    "RequestFailed": "the VRF coordinator did not deliver within its timeout",
    "TooManyConfirmations": "the canary commit window needs more confirmations than VRF v2.5 waits (200)",
    # appeals (AppealModule, AppealSettlement; issue 15), in the order the contract checks them
    "LeaversNotAscending": "the proven leavers named to quote/appeal are not strictly ascending (a duplicate or out of order) at this address: sort them and drop duplicates",
    "TooManyLeavers": "more proven leavers were named than admission reads (AppealMath.MAX_LEAVERS, 128): name only the earlier-panel auditors of the appealed segments that left",
    "AppealsDisabled": "this session's parameters disable appeals (appealBlocks or maxRounds is 0), or it opened before the modules were wired",
    "AppealWindowNotOpen": "appeals open only after round 0 finalized and the canary reveal window closed",
    "EmptyAppeal": "an appeal names at least one segment",
    "InvalidSegment": "the session has no segment with this index",
    "SegmentsNotAscending": "name each segment once, in ascending order",
    "SegmentIsCanary": "a revealed canary is never appealed",
    "MixedDepths": "one appeal names segments that had the same number of appeal panels",
    "MixedTiers": "one appeal names segments of one tier (appeal each tier's segments separately)",
    "AppealPending": "a panel of this segment is still running; appeal it again after that round ends",
    "SegmentFinal": "the segment's last panel did not decide (keys withheld or unfillable): its outcome is final",
    "NoRoundsLeft": "the segment had every appeal panel the parameters allow (maxRounds)",
    "AppealWindowClosed": "the segment's appeal window has closed (or the session's outcome is final)",
    "NotEnoughEligibleAuditors": "too few auditors of the tier never sat on this segment to seat a larger panel",
    "PanelTooLarge": "the round names more segments than the seat cap and more seats than its capacity, "
    "k + seatCap x (eligible - eligible / 2 - k) with eligible the tier's auditors who can sit on them (live "
    "members less their earlier panels' seats), so that the draw fails only if more than half of them "
    "refuse: appeal fewer segments per round",
    "BondAboveLimit": "the bond is more than the most you agreed to pay (raise --bond)",
    "MinStakeBelowSessionLocks": "appeals are on and the tier's minimum stake cannot back every seat lock this "
    "session can ask of one auditor (the lock per segment of the tier): open fewer segments of that tier, or "
    "have the owner raise the minimum stake",
    "RefusalsNotCharged": "the quote said lock refusals would be charged, but in the block the appeal was mined "
    "the tier's eligible auditors are fewer than 2k (the epoch's live count moved): quote again and decide",
    "TooManyRounds": "the session used every appeal round it may have",
    "UnknownRound": "the session has no such appeal round",
    "WrongRoundStatus": "the appeal round is not in the phase this step needs",
    "OutcomeNotFinal": "the session's outcome can still change (canary reveals, appeal windows, a running round)",
    "AppealsUnresolved": "the appealed segments' money is not resolved yet: call settleAppeals first",
    "CheckpointUnorderedInsertion": "parameter versions must be added in session order",
    "SettlementNotBound": (
        "the AppealModule is deployed only with an AppealSettlement made for it: deployed just before,"
        " naming the module's predicted address and the same core (redeploy the pair)"
    ),
    # gold canaries (CanaryModule; issue 15)
    "NotCoreOwner": "only the core's owner (governance) authorizes canary operators",
    "ZeroOperator": "a canary operator's address is zero",
    "NotCanaryOperator": "this account is not a canary operator the core's owner authorized",
    "ProviderIsCanaryOperator": "a session's provider never commits or reveals its own canaries",
    "NotCommittingOperator": "only the canary operator that committed a session's canaries reveals them",
    "CanariesAlreadyCommitted": "the session's canaries are committed already",
    "WrongCanaryCount": "the number of canary commitments must be canary_count(segments, canaryRateBps)",
    "CommitTooLate": "canaries are committed only while the draw's randomness is still pending "
    "(through open + max(delay, canaryCommitBlocks))",
    "CanaryRevealNotOpen": "canaries are revealed only after round 0 finalized",
    "CanaryRevealClosed": "the canary reveal window has closed: the canary stays unrevealed",
    "UnknownCanarySlot": "no canary commitment at this position",
    "CanaryAlreadyRevealed": "this canary is revealed already",
    "SegmentAlreadyCanary": "another revealed canary names this segment",
    "InvalidVerdict": "a canary's verdict is PASS (1) or FAIL (2)",
    "CanaryMismatch": "(index, verdict, salt) does not open the committed hash",
    # token, ownership, pausing, transfers (OpenZeppelin)
    "ZeroAddress": "an address argument is zero",
    "ZeroHolder": "the initial supply needs a holder",
    "ERC20InsufficientBalance": "the account does not hold enough tokens",
    "ERC20InsufficientAllowance": "the contract is not approved to move enough tokens",
    "ERC20InvalidApprover": "invalid approver",
    "ERC20InvalidReceiver": "invalid receiver",
    "ERC20InvalidSender": "invalid sender",
    "ERC20InvalidSpender": "invalid spender",
    "ERC2612ExpiredSignature": "the permit expired",
    "ERC2612InvalidSigner": "the permit was not signed by the owner",
    "ECDSAInvalidSignature": "invalid signature",
    "ECDSAInvalidSignatureLength": "invalid signature length",
    "ECDSAInvalidSignatureS": "invalid signature (high s)",
    "EnforcedPause": "the contract is paused by its owner",
    "ExpectedPause": "the contract is not paused",
    "OwnableInvalidOwner": "invalid owner",
    "OwnableUnauthorizedAccount": "only the owner may do this",
    "SafeERC20FailedOperation": "a token transfer failed",
}
