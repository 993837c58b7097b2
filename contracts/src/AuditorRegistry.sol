// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {IStaking} from "./interfaces/IStaking.sol";

/// @title AuditorRegistry
/// @notice Who audits: tier (0 Computer, 1 LLM, 2 Human), expertise domains and the X25519 public key
/// that segment keys are sealed to. Stake, reputation and eligibility live in Staking.
/// @dev Deregistration removes the auditor from sortition at once; its stake stays withdrawable
/// through Staking once the seats it already holds are settled.
contract AuditorRegistry is Ownable2Step, Pausable {
    /// @notice An auditor's public profile.
    struct Profile {
        uint8 tier;
        bool registered;
        uint40 registeredAt;
        uint64 expertise;
        bytes32 encryptionKey;
    }

    /// @notice Where eligibility is tracked.
    IStaking public immutable staking;
    mapping(address => Profile) private _profiles;
    address[] private _auditors;
    mapping(address => bool) private _listed;

    error ZeroAddress();
    error InvalidTier(uint256 tier);
    error ZeroEncryptionKey();
    error AlreadyRegistered(address auditor);
    error NotRegistered(address auditor);

    event AuditorRegistered(address indexed auditor, uint8 tier, uint64 expertise, bytes32 encryptionKey);
    event AuditorProfileUpdated(address indexed auditor, uint64 expertise, bytes32 encryptionKey);
    event AuditorDeregistered(address indexed auditor);

    /// @param staking_ The staking contract (it must wire this registry).
    /// @param owner_ Who may pause registrations.
    constructor(IStaking staking_, address owner_) Ownable(owner_) {
        if (address(staking_) == address(0)) revert ZeroAddress();
        staking = staking_;
    }

    /// @notice Register the caller as an auditor of `tier` with expertise bitmask and X25519 key.
    function register(uint8 tier, uint64 expertise, bytes32 encryptionKey) external whenNotPaused {
        if (tier > 2) revert InvalidTier(tier);
        if (encryptionKey == bytes32(0)) revert ZeroEncryptionKey();
        Profile storage p = _profiles[msg.sender];
        if (p.registered) revert AlreadyRegistered(msg.sender);
        p.tier = tier;
        p.registered = true;
        p.registeredAt = uint40(block.timestamp);
        p.expertise = expertise;
        p.encryptionKey = encryptionKey;
        if (!_listed[msg.sender]) {
            _listed[msg.sender] = true;
            _auditors.push(msg.sender);
        }
        emit AuditorRegistered(msg.sender, tier, expertise, encryptionKey);
        staking.onRegister(msg.sender, tier);
    }

    /// @notice Change the caller's expertise and encryption key (applies to future draws).
    function updateProfile(uint64 expertise, bytes32 encryptionKey) external {
        if (encryptionKey == bytes32(0)) revert ZeroEncryptionKey();
        Profile storage p = _profiles[msg.sender];
        if (!p.registered) revert NotRegistered(msg.sender);
        p.expertise = expertise;
        p.encryptionKey = encryptionKey;
        emit AuditorProfileUpdated(msg.sender, expertise, encryptionKey);
    }

    /// @notice Leave sortition; stake is withdrawn through Staking once open seats settle.
    function deregister() external {
        Profile storage p = _profiles[msg.sender];
        if (!p.registered) revert NotRegistered(msg.sender);
        p.registered = false;
        emit AuditorDeregistered(msg.sender);
        staking.onDeregister(msg.sender);
    }

    /// @notice Stop new registrations in an emergency.
    function pause() external onlyOwner {
        _pause();
    }

    /// @notice Resume registrations.
    function unpause() external onlyOwner {
        _unpause();
    }

    /// @notice The profile of `auditor`.
    function profileOf(address auditor) external view returns (Profile memory) {
        return _profiles[auditor];
    }

    /// @notice Whether `auditor` is currently registered.
    function isRegistered(address auditor) external view returns (bool) {
        return _profiles[auditor].registered;
    }

    /// @notice X25519 public key of `auditor` (zero if never registered).
    function encryptionKeyOf(address auditor) external view returns (bytes32) {
        return _profiles[auditor].encryptionKey;
    }

    /// @notice Number of addresses that ever registered.
    function auditorCount() external view returns (uint256) {
        return _auditors.length;
    }

    /// @notice Addresses that ever registered, `count` from `start` (paginated).
    function auditors(uint256 start, uint256 count) external view returns (address[] memory page) {
        uint256 n = _auditors.length;
        if (start >= n) return new address[](0);
        uint256 end = start + count > n ? n : start + count;
        page = new address[](end - start);
        for (uint256 i = start; i < end; ++i) {
            page[i - start] = _auditors[i];
        }
    }
}
