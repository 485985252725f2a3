#include "core/admin/topic_admin.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "core/base/text.h"
#include "core/cluster/topic.h"

namespace ksim {

namespace {

Status TopicExists(std::string_view topic) {
  return Status(Errc::kTopicAlreadyExists, "Topic \"" + std::string(topic) + "\" already exists.");
}

// GetChildren where a missing parent means no children (ZkUtils.getChildrenParentMayNotExist).
void ChildrenOrNone(Coordination& zk, std::string path,
                    std::function<void(Result<std::vector<std::string>>)> done) {
  zk.GetChildren(std::move(path), false,
                 [done = std::move(done)](Result<std::vector<std::string>> children) {
                   if (!children.ok() && children.status() == Errc::kNoNode) {
                     done(std::vector<std::string>{});
                     return;
                   }
                   done(std::move(children));
                 });
}

// ZkUtils.updatePersistentPath: set the data; when the node is missing, create it with its
// parents; when someone created it meanwhile, set again.
void UpdatePersistentPath(Coordination& zk, std::string path, std::string data,
                          std::function<void(Status)> done) {
  zk.SetData(path, data, kAnyVersion,
             [&zk, path, data, done = std::move(done)](Result<ZnodeStat> set) mutable {
               if (set.ok() || set.status() != Errc::kNoNode) {
                 done(set.status());
                 return;
               }
               CreateWithParents(
                   zk, path, data, CreateMode::kPersistent,
                   [&zk, path, data, done = std::move(done)](Result<std::string> created) mutable {
                     if (created.ok() || created.status() != Errc::kNodeExists) {
                       done(created.status());
                       return;
                     }
                     zk.SetData(path, data, kAnyVersion,
                                [done = std::move(done)](Result<ZnodeStat> again) {
                                  done(again.status());
                                });
                   });
             });
}

}  // namespace

std::string FormatPartitionSet(const std::vector<zk::TopicAndPartition>& partitions) {
  std::string text = "Set(";
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (i > 0) text += ", ";
    text += "[" + partitions[i].topic + "," + std::to_string(partitions[i].partition.value()) + "]";
  }
  return text + ")";
}

std::string FormatCreatedTopic(std::string_view topic) {
  return "Created topic \"" + std::string(topic) + "\".\n";
}

std::string FormatTopicList(const std::vector<ListedTopic>& topics) {
  std::string out;
  for (const ListedTopic& topic : topics) {
    out += topic.name;
    if (topic.marked_for_deletion) out += " - marked for deletion";
    out += "\n";
  }
  return out;
}

std::string FormatTopicDescription(const TopicDescription& description) {
  // TopicCommand.describeTopic (0.10): the header, then one line per partition.
  std::string configs;
  for (const auto& [key, value] : description.config) {
    if (!configs.empty()) configs += ",";
    configs += key + "=" + value;
  }
  std::string out = "Topic:" + description.topic +
                    "\tPartitionCount:" + std::to_string(description.partitions.size()) +
                    "\tReplicationFactor:" + std::to_string(description.replication_factor()) +
                    "\tConfigs:" + configs + "\n";
  for (const PartitionDescription& p : description.partitions) {
    out += "\tTopic: " + description.topic;
    out += "\tPartition: " + ToString(p.partition);
    out += "\tLeader: " + (p.leader ? ToString(*p.leader) : std::string("none"));
    out += "\tReplicas: " + JoinIds(p.replicas);
    out += "\tIsr: " + JoinIds(p.isr) + "\n";
  }
  return out;
}

TopicAdmin::TopicAdmin(Coordination& zk, RandomSource& random, BrokerConfig broker_defaults,
                       std::string zk_connect)
    : zk_(zk),
      random_(random),
      broker_defaults_(std::move(broker_defaults)),
      zk_connect_(std::move(zk_connect)) {}

// ---- Create ---------------------------------------------------------------------------------

void TopicAdmin::LiveBrokers(Done<std::vector<BrokerId>> done) {
  ChildrenOrNone(zk_, std::string(zk::kBrokerIdsPath),
                 [done = std::move(done)](Result<std::vector<std::string>> children) {
                   if (!children.ok()) {
                     done(children.status());
                     return;
                   }
                   std::vector<BrokerId> brokers;
                   for (const std::string& name : *children) {
                     Result<BrokerId> id = zk::ParseBrokerIdNode(name);
                     if (!id.ok()) {
                       done(id.status());
                       return;
                     }
                     brokers.push_back(*id);
                   }
                   std::sort(brokers.begin(), brokers.end());  // numeric, as Kafka sorts them
                   done(std::move(brokers));
                 });
}

void TopicAdmin::CreateTopic(std::string topic, int32_t partitions, int32_t replication_factor,
                             std::optional<ReplicaAssignment> manual, zk::TopicConfig overrides,
                             Done<ReplicaAssignment> done) {
  LiveBrokers([this, topic = std::move(topic), partitions, replication_factor,
               manual = std::move(manual), overrides = std::move(overrides),
               done = std::move(done)](Result<std::vector<BrokerId>> brokers) mutable {
    if (!brokers.ok()) {
      done(brokers.status());
      return;
    }
    CreateWithBrokers(std::move(topic), partitions, replication_factor, std::move(manual),
                      std::move(overrides), std::move(brokers).value(), std::move(done));
  });
}

void TopicAdmin::CreateWithBrokers(std::string topic, int32_t partitions,
                                   int32_t replication_factor,
                                   std::optional<ReplicaAssignment> manual,
                                   zk::TopicConfig overrides, std::vector<BrokerId> brokers,
                                   Done<ReplicaAssignment> done) {
  ReplicaAssignment assignment;
  if (manual) {
    Status valid = ValidateReplicaAssignment(*manual, brokers);
    if (!valid.ok()) {
      done(std::move(valid));
      return;
    }
    assignment = std::move(*manual);
  } else {
    // Kafka draws the start only once the arguments passed its checks.
    const int32_t broker_count = static_cast<int32_t>(brokers.size());
    AssignmentStart start;
    if (partitions > 0 && replication_factor > 0 && replication_factor <= broker_count) {
      start = DrawAssignmentStart(random_, broker_count);
    }
    Result<ReplicaAssignment> assigned =
        AssignReplicasToBrokers(brokers, partitions, replication_factor, start);
    if (!assigned.ok()) {
      done(assigned.status());
      return;
    }
    assignment = std::move(assigned).value();
  }
  Status name = ValidateTopicName(topic);
  if (!name.ok()) {
    done(std::move(name));
    return;
  }
  // Exists, then collisions, then the config (createOrUpdateTopicPartitionAssignmentPathInZK).
  std::string path = zk::TopicPath(topic);
  zk_.Exists(
      std::move(path), false,
      [this, topic = std::move(topic), assignment = std::move(assignment),
       overrides = std::move(overrides),
       done = std::move(done)](Result<std::optional<ZnodeStat>> exists) mutable {
        if (!exists.ok()) {
          done(exists.status());
          return;
        }
        if (exists->has_value()) {
          done(TopicExists(topic));
          return;
        }
        auto check_config_and_write = [this](std::string topic, ReplicaAssignment assignment,
                                             zk::TopicConfig overrides,
                                             Done<ReplicaAssignment> done) {
          ConfigOverrides list(overrides.begin(), overrides.end());
          Result<TopicConfig> config = MakeTopicConfig(broker_defaults_, list, "--config");
          if (!config.ok()) {
            done(config.status());
            return;
          }
          WriteTopic(std::move(topic), std::move(assignment), std::move(overrides),
                     std::move(done));
        };
        if (!HasCollisionChars(topic)) {
          check_config_and_write(std::move(topic), std::move(assignment), std::move(overrides),
                                 std::move(done));
          return;
        }
        ChildrenOrNone(
            zk_, std::string(zk::kBrokerTopicsPath),
            [check_config_and_write, topic = std::move(topic), assignment = std::move(assignment),
             overrides = std::move(overrides),
             done = std::move(done)](Result<std::vector<std::string>> existing) mutable {
              if (!existing.ok()) {
                done(existing.status());
                return;
              }
              std::vector<std::string> colliding = CollidingTopics(topic, *existing);
              if (!colliding.empty()) {
                std::string names;
                for (const std::string& c : colliding) names += (names.empty() ? "" : ", ") + c;
                done(Status(Errc::kInvalidTopicException,
                            "Topic \"" + topic + "\" collides with existing topics: " + names));
                return;
              }
              check_config_and_write(std::move(topic), std::move(assignment), std::move(overrides),
                                     std::move(done));
            });
      });
}

void TopicAdmin::WriteTopic(std::string topic, ReplicaAssignment assignment,
                            zk::TopicConfig overrides, Done<ReplicaAssignment> done) {
  // writeEntityConfig first (not transactional with the assignment, as in Kafka), then the
  // assignment, whose creation is what the controller reacts to.
  std::string config_path = zk::TopicConfigPath(topic);
  UpdatePersistentPath(
      zk_, std::move(config_path), zk::EncodeTopicConfig(overrides),
      [this, topic = std::move(topic), assignment = std::move(assignment),
       done = std::move(done)](Status written) mutable {
        if (!written.ok()) {
          done(std::move(written));
          return;
        }
        std::string data = zk::EncodeReplicaAssignment(assignment);
        CreateWithParents(
            zk_, zk::TopicPath(topic), std::move(data), CreateMode::kPersistent,
            [topic, assignment = std::move(assignment),
             done = std::move(done)](Result<std::string> created) mutable {
              if (!created.ok()) {
                done(created.status() == Errc::kNodeExists ? TopicExists(topic) : created.status());
                return;
              }
              done(std::move(assignment));
            });
      });
}

// ---- List -----------------------------------------------------------------------------------

void TopicAdmin::ListTopics(Done<std::vector<ListedTopic>> done) {
  ChildrenOrNone(zk_, std::string(zk::kBrokerTopicsPath),
                 [this, done = std::move(done)](Result<std::vector<std::string>> topics) mutable {
                   if (!topics.ok()) {
                     done(topics.status());
                     return;
                   }
                   ChildrenOrNone(zk_, std::string(zk::kDeleteTopicsPath),
                                  [topics = std::move(topics).value(), done = std::move(done)](
                                      Result<std::vector<std::string>> marked) {
                                    if (!marked.ok()) {
                                      done(marked.status());
                                      return;
                                    }
                                    std::vector<ListedTopic> listed;
                                    for (const std::string& name : topics) {
                                      const bool is_marked =
                                          std::binary_search(marked->begin(), marked->end(), name);
                                      listed.push_back({name, is_marked});
                                    }
                                    done(std::move(listed));
                                  });
                 });
}

// ---- Describe -------------------------------------------------------------------------------

void TopicAdmin::DescribeTopics(std::optional<std::string> topic,
                                Done<std::vector<TopicDescription>> done) {
  ListTopics([this, topic = std::move(topic),
              done = std::move(done)](Result<std::vector<ListedTopic>> listed) mutable {
    if (!listed.ok()) {
      done(listed.status());
      return;
    }
    std::vector<ListedTopic> wanted;
    for (ListedTopic& t : *listed) {
      if (!topic || t.name == *topic) wanted.push_back(std::move(t));
    }
    struct Pending {
      std::vector<std::optional<TopicDescription>> found;
      size_t remaining = 0;
      Status error;
      Done<std::vector<TopicDescription>> done;
    };
    auto pending = std::make_shared<Pending>();
    pending->found.resize(wanted.size());
    pending->remaining = wanted.size();
    pending->done = std::move(done);
    if (wanted.empty()) {
      pending->done(std::vector<TopicDescription>{});
      return;
    }
    for (size_t i = 0; i < wanted.size(); ++i) {
      DescribeOne(wanted[i].name, wanted[i].marked_for_deletion,
                  [pending, i](Result<std::optional<TopicDescription>> one) {
                    if (!one.ok() && pending->error.ok()) pending->error = one.status();
                    if (one.ok()) pending->found[i] = std::move(one).value();
                    if (--pending->remaining > 0) return;
                    if (!pending->error.ok()) {
                      pending->done(pending->error);
                      return;
                    }
                    // A topic deleted between the listing and its read is left out.
                    std::vector<TopicDescription> out;
                    for (auto& d : pending->found) {
                      if (d) out.push_back(std::move(*d));
                    }
                    pending->done(std::move(out));
                  });
    }
  });
}

void TopicAdmin::DescribeOne(std::string topic, bool marked_for_deletion,
                             std::function<void(Result<std::optional<TopicDescription>>)> done) {
  std::string path = zk::TopicPath(topic);
  zk_.GetData(
      std::move(path), false,
      [this, topic = std::move(topic), marked_for_deletion,
       done = std::move(done)](Result<ZnodeData> data) mutable {
        if (!data.ok()) {
          if (data.status() == Errc::kNoNode) {
            done(std::optional<TopicDescription>());
          } else {
            done(data.status());
          }
          return;
        }
        Result<zk::ReplicaAssignment> assignment = zk::DecodeReplicaAssignment(data->data);
        if (!assignment.ok()) {
          done(assignment.status());
          return;
        }
        struct Pending {
          TopicDescription description;
          size_t remaining = 0;
          Status error;
          std::function<void(Result<std::optional<TopicDescription>>)> done;
          void Finish() {
            if (--remaining > 0) return;
            if (!error.ok()) {
              done(error);
            } else {
              done(std::optional<TopicDescription>(std::move(description)));
            }
          }
          void Fail(Status status) {
            if (error.ok()) error = std::move(status);
          }
        };
        auto pending = std::make_shared<Pending>();
        pending->description.topic = topic;
        pending->description.marked_for_deletion = marked_for_deletion;
        for (const auto& [partition, replicas] : *assignment) {
          pending->description.partitions.push_back({partition, replicas, std::nullopt, {}});
        }
        pending->remaining = pending->description.partitions.size() + 1;
        pending->done = std::move(done);

        // AdminUtils.fetchEntityConfig: no znode, no overrides.
        zk_.GetData(zk::TopicConfigPath(topic), false, [pending](Result<ZnodeData> config) {
          if (config.ok()) {
            Result<zk::TopicConfig> decoded = zk::DecodeTopicConfig(config->data);
            if (decoded.ok()) {
              pending->description.config = std::move(decoded).value();
            } else {
              pending->Fail(decoded.status());
            }
          } else if (config.status() != Errc::kNoNode) {
            pending->Fail(config.status());
          }
          pending->Finish();
        });
        for (size_t i = 0; i < pending->description.partitions.size(); ++i) {
          const PartitionId partition = pending->description.partitions[i].partition;
          zk_.GetData(zk::PartitionStatePath(topic, partition), false,
                      [pending, i](Result<ZnodeData> state) {
                        if (state.ok()) {
                          Result<zk::PartitionState> decoded =
                              zk::DecodePartitionState(state->data);
                          if (decoded.ok()) {
                            pending->description.partitions[i].leader = decoded->leader;
                            pending->description.partitions[i].isr = decoded->isr;
                          } else {
                            pending->Fail(decoded.status());
                          }
                        } else if (state.status() != Errc::kNoNode) {
                          pending->Fail(state.status());
                        }
                        pending->Finish();
                      });
        }
      });
}

// ---- Delete ---------------------------------------------------------------------------------

void TopicAdmin::DeleteTopic(std::string topic, Done<std::string> done) {
  std::string path = zk::TopicPath(topic);
  zk_.Exists(std::move(path), false,
             [this, topic = std::move(topic),
              done = std::move(done)](Result<std::optional<ZnodeStat>> exists) mutable {
               if (!exists.ok()) {
                 done(exists.status());
                 return;
               }
               if (!exists->has_value()) {
                 done(Status(Errc::kUnknownTopicOrPartition,
                             "Topic " + topic + " does not exist on ZK path " + zk_connect_));
                 return;
               }
               if (IsInternalTopic(topic)) {
                 done(Status(Errc::kInvalidTopicException,
                             "Topic " + topic +
                                 " is a kafka internal topic and is not allowed to be marked for "
                                 "deletion."));
                 return;
               }
               CreateWithParents(
                   zk_, zk::DeleteTopicPath(topic), "", CreateMode::kPersistent,
                   [topic, done = std::move(done)](Result<std::string> created) {
                     if (created.ok()) {
                       done("Topic " + topic +
                            " is marked for deletion.\nNote: This will have no impact if "
                            "delete.topic.enable is not set to true.\n");
                     } else if (created.status() == Errc::kNodeExists) {
                       done("Topic " + topic + " is already marked for deletion.\n");
                     } else {
                       done(created.status());
                     }
                   });
             });
}

// ---- kafka-preferred-replica-election.sh --------------------------------------------------------

void TopicAdmin::StartPreferredReplicaElection(
    std::optional<std::vector<zk::TopicAndPartition>> partitions,
    Done<PreferredElectionStarted> done) {
  ReadAllPartitions([this, partitions = std::move(partitions),
                     done = std::move(done)](Result<TopicPartitions> all) mutable {
    if (!all.ok()) {
      done(all.status());
      return;
    }
    PreferredElectionStarted started;
    if (!partitions) {
      for (const auto& [topic, ids] : *all) {
        for (PartitionId id : ids) started.partitions.push_back({topic, id});
      }
    } else {
      std::vector<zk::TopicAndPartition> wanted = *partitions;
      std::sort(wanted.begin(), wanted.end());
      for (const zk::TopicAndPartition& tp : wanted) {
        const std::string name = "[" + tp.topic + "," + std::to_string(tp.partition.value()) + "]";
        auto topic = all->find(tp.topic);
        if (topic == all->end()) {
          started.skipped.push_back("Skipping preferred replica leader election for partition " +
                                    name + " since topic " + tp.topic + " doesn't exist");
        } else if (std::find(topic->second.begin(), topic->second.end(), tp.partition) ==
                   topic->second.end()) {
          started.skipped.push_back("Skipping preferred replica leader election for partition " +
                                    name + " since it doesn't exist");
        } else {
          started.partitions.push_back(tp);
        }
      }
    }
    WritePreferredElection(std::move(started), std::move(done));
  });
}

void TopicAdmin::ReadAllPartitions(Done<TopicPartitions> done) {
  ChildrenOrNone(zk_, std::string(zk::kBrokerTopicsPath),
                 [this, done = std::move(done)](Result<std::vector<std::string>> topics) mutable {
                   if (!topics.ok()) {
                     done(topics.status());
                     return;
                   }
                   std::sort(topics->begin(), topics->end());
                   ReadPartitionsOf(std::move(topics).value(), 0,
                                    std::make_shared<TopicPartitions>(), std::move(done));
                 });
}

void TopicAdmin::ReadPartitionsOf(std::vector<std::string> topics, size_t next,
                                  std::shared_ptr<TopicPartitions> found,
                                  Done<TopicPartitions> done) {
  if (next == topics.size()) {
    done(*found);
    return;
  }
  std::string path = zk::TopicPath(topics[next]);
  zk_.GetData(std::move(path), false,
              [this, topics = std::move(topics), next, found,
               done = std::move(done)](Result<ZnodeData> data) mutable {
                if (!data.ok() && data.status() != Errc::kNoNode) {
                  done(data.status());
                  return;
                }
                if (data.ok()) {
                  // A topic deleted meanwhile has none; unparsable data is an error, as Kafka's
                  // Json parsing throws.
                  Result<zk::ReplicaAssignment> assignment =
                      zk::DecodeReplicaAssignment(data->data);
                  if (!assignment.ok()) {
                    done(assignment.status());
                    return;
                  }
                  std::vector<PartitionId>& ids = (*found)[topics[next]];
                  for (const auto& [partition, replicas] : *assignment) ids.push_back(partition);
                }
                ReadPartitionsOf(std::move(topics), next + 1, found, std::move(done));
              });
}

void TopicAdmin::WritePreferredElection(PreferredElectionStarted started,
                                        Done<PreferredElectionStarted> done) {
  const std::string path(zk::kPreferredReplicaElectionPath);
  std::string data = zk::EncodePreferredReplicaElection(started.partitions);
  CreateWithParents(zk_, path, std::move(data), CreateMode::kPersistent,
                    [this, path, started = std::move(started),
                     done = std::move(done)](Result<std::string> created) mutable {
                      if (created.ok()) {
                        done(std::move(started));
                        return;
                      }
                      if (created.status() != Errc::kNodeExists) {
                        done(created.status());
                        return;
                      }
                      // ZkNodeExistsException: an election the controller has not finished.
                      zk_.GetData(path, false, [done = std::move(done)](Result<ZnodeData> data) {
                        if (!data.ok()) {
                          done(data.status());
                          return;
                        }
                        Result<std::vector<zk::TopicAndPartition>> running =
                            zk::DecodePreferredReplicaElection(data->data);
                        if (!running.ok()) {
                          done(running.status());
                          return;
                        }
                        done(Status(Errc::kInvalidRequest,
                                    "Preferred replica leader election currently in progress for " +
                                        FormatPartitionSet(*running) + ". Aborting operation"));
                      });
                    });
}

}  // namespace ksim
